//! Chapter section 5: layer normalization, skip connections and the encoder layer.
mod common;

use rstest::rstest;
use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::{shape, values};
use transformer_anatomy::{
    AttentionKind, BertConfig, EncoderOptions, LayerConfig, LayerNormPlacement, Pass, Residual, TransformerEncoderLayer,
};

/// One layer of `config` with the given placement and attention.
fn layer_config(config: &BertConfig, placement: LayerNormPlacement, attention: AttentionKind) -> LayerConfig {
    LayerConfig { placement, attention, ..config.layer() }
}

#[test]
fn layer_norm_has_known_values() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let ln = nn::layer_norm(vs.root(), vec![3], nn::LayerNormConfig { eps: 1e-12, ..Default::default() });
    let out = values(&ln.forward(&Tensor::from_slice(&[1.0f32, 2.0, 3.0]).view([1, 3])));
    // mean 2, population variance 2/3: (x - 2) / sqrt(2/3)
    for (g, want) in out.iter().zip([-1.2247449, 0.0, 1.2247449]) {
        assert!((g - want).abs() < 1e-5, "layer norm gave {out:?}");
    }
}

#[rstest]
fn the_layer_keeps_the_shape(
    #[values(1, 2)] batch: i64,
    #[values(1, 5)] seq: i64,
    #[values(BertConfig::bert_base_uncased(EncoderOptions::book()), BertConfig::tiny(EncoderOptions::book()))]
    config: BertConfig,
    #[values(LayerNormPlacement::Pre, LayerNormPlacement::Post)] placement: LayerNormPlacement,
) {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &layer_config(&config, placement, AttentionKind::PerHead));
    let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, Device::Cpu));
    let out = layer.forward(&x, None, Pass::WEIGHTS);
    assert_eq!(out.hidden_state.size(), [batch, seq, config.hidden_size]);
    assert_eq!(out.weights.unwrap().size(), [batch, config.num_attention_heads, seq, seq]);
    assert_eq!(layer.forward_t(&x, false).size(), out.hidden_state.size());
    assert!(layer.forward(&x, None, false).weights.is_none(), "weights only when the pass asks for them");
}

/// The two placements written out by hand, from the layer's own parts.
fn by_hand(layer: &TransformerEncoderLayer, x: &Tensor) -> Tensor {
    let attention = |h: &Tensor| layer.attention.forward(h, h, None, Pass::EVAL).output;
    let ff = |h: &Tensor| layer.feed_forward.forward_t(h, false);
    let (ln1, ln2) = (&layer.attention_residual.layer_norm, &layer.feed_forward_residual.layer_norm);
    match layer.attention_residual.placement {
        LayerNormPlacement::Pre => {
            let h = x + attention(&ln1.forward(x));
            &h + ff(&ln2.forward(&h))
        }
        LayerNormPlacement::Post => {
            let h = ln1.forward(&(x + attention(x)));
            ln2.forward(&(&h + ff(&h)))
        }
    }
}

#[rstest]
fn placements_follow_their_formulas(
    #[values(LayerNormPlacement::Pre, LayerNormPlacement::Post)] placement: LayerNormPlacement,
    #[values(AttentionKind::PerHead, AttentionKind::Fused)] attention: AttentionKind,
) {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &layer_config(&config, placement, attention));
    let x = Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu));
    common::assert_close(&layer.forward(&x, None, false).hidden_state, &by_hand(&layer, &x), 1e-5);
}

#[test]
fn pre_and_post_layer_norm_differ_with_the_same_weights() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let pre_ln = layer_config(&config, LayerNormPlacement::Pre, AttentionKind::Fused);
    let mut layer = TransformerEncoderLayer::new(vs.root(), &pre_ln);
    let x = Tensor::randn([1, 5, config.hidden_size], (Kind::Float, Device::Cpu)) * 3;
    let pre = layer.forward_t(&x, false);
    layer.attention_residual.placement = LayerNormPlacement::Post;
    layer.feed_forward_residual.placement = LayerNormPlacement::Post;
    assert!(common::max_abs_diff(&pre, &layer.forward_t(&x, false)) > 1e-2);
}

#[test]
fn post_layer_norm_output_is_normalized_per_token() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::bert());
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &config.layer());
    let out = layer.forward_t(&(Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu)) * 10), false);
    let mean = out.mean_dim(-1, false, Kind::Float);
    let var = out.var_dim(-1, false, false);
    common::assert_close(&mean, &mean.zeros_like(), 1e-5);
    common::assert_close(&var, &var.ones_like(), 1e-3);
}

#[test]
fn parameters_have_hugging_face_names() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let config = BertConfig::tiny(EncoderOptions::bert()).layer();
    let layer = TransformerEncoderLayer::new(vs.root() / "encoder" / "layer" / 0, &config);
    assert_eq!(layer.attention.kind(), AttentionKind::Fused);
    let mut names: Vec<String> =
        vs.variables().into_keys().map(|n| n.trim_start_matches("encoder.layer.0.").to_string()).collect();
    names.sort();
    snapshot!("encoder_layer_parameter_names", names.join("\n"));
}

#[test]
fn encoder_layer_shapes_snapshot() {
    let _generator = common::seed();
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &config.layer());
    let x = Tensor::randn([1, 5, 768], (Kind::Float, Device::Cpu));
    let out = layer.forward(&x, None, Pass::WEIGHTS);
    let (out, weights) = (out.hidden_state, out.weights.unwrap());
    snapshot!(
        "encoder_layer_shapes",
        format!("input {}\noutput {}\nattention weights {}", shape(&x), shape(&out), shape(&weights))
    );
}

/// The residual block on a sub-layer whose output is known: `f(h) = 2h + 1`. Pre-LN must give
/// `x + f(LN(x))`, post-LN `LN(x + f(x))`, with LN written out by hand (mean 0, population variance 1).
#[rstest]
fn the_residual_block_follows_its_formula(
    #[values(LayerNormPlacement::Pre, LayerNormPlacement::Post)] placement: LayerNormPlacement,
) {
    let _generator = common::seed();
    let config = LayerConfig { placement, ..BertConfig::tiny(EncoderOptions::book()).layer() };
    let vs = nn::VarStore::new(Device::Cpu);
    let block = Residual::new(vs.root() / "ln", &config);
    let x = Tensor::randn([2, 3, config.hidden_size], (Kind::Float, Device::Cpu)) * 4 + 1;
    let f = |h: &Tensor| h * 2.0 + 1.0;
    let ln = |h: &Tensor| {
        let mean = h.mean_dim(-1, true, Kind::Float);
        let var = h.var_dim(-1, false, true); // biased (population) variance, as LayerNorm uses
        (h - mean) / (var + config.layer_norm_eps).sqrt()
    };
    let expected = match placement {
        LayerNormPlacement::Pre => &x + f(&ln(&x)),
        LayerNormPlacement::Post => ln(&(&x + f(&x))),
    };
    common::assert_close(&block.apply(&x, false, f), &expected, 1e-4);
    // And the other placement's formula gives something else, so the test can tell them apart.
    let other = match placement {
        LayerNormPlacement::Pre => ln(&(&x + f(&x))),
        LayerNormPlacement::Post => &x + f(&ln(&x)),
    };
    assert!(common::max_abs_diff(&block.apply(&x, false, f), &other) > 1e-1);
}

#[test]
fn the_residual_block_drops_out_the_sublayer_only_in_training() {
    let _generator = common::seed();
    let config = BertConfig { hidden_dropout_prob: 0.5, ..BertConfig::tiny(EncoderOptions::book()) }.layer();
    let vs = nn::VarStore::new(Device::Cpu);
    let block = Residual::new(vs.root() / "ln", &config); // the book's: pre-LN
    let x = Tensor::randn([2, 3, config.hidden_size], (Kind::Float, Device::Cpu));
    let ones = |h: &Tensor| h.ones_like();
    common::assert_close(&block.apply(&x, false, ones), &(&x + 1.0), 0.0);
    // In training half the sub-layer's outputs are dropped and the rest doubled: x + 0 or x + 2.
    let added = block.apply(&x, true, ones) - &x;
    let values = values(&added);
    assert!(values.iter().all(|v| (v.abs() < 1e-6) || ((v - 2.0).abs() < 1e-5)), "dropout gave {values:?}");
    assert!(values.iter().any(|v| v.abs() < 1e-6) && values.iter().any(|v| (v - 2.0).abs() < 1e-5));
}
