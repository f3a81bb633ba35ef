//! Chapter section 5: layer normalization, skip connections and the encoder layer.
mod common;

use rstest::rstest;
use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::{shape, values};
use transformer_anatomy::{
    Attention, AttentionKind, BertConfig, EncoderOptions, LayerNormPlacement, TransformerEncoderLayer,
};

fn options(placement: LayerNormPlacement, attention: AttentionKind) -> EncoderOptions {
    EncoderOptions { placement, attention, token_types: false }
}

#[test]
fn layer_norm_has_known_values() {
    common::seed();
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
    #[values(BertConfig::bert_base_uncased(), BertConfig::tiny())] config: BertConfig,
    #[values(LayerNormPlacement::Pre, LayerNormPlacement::Post)] placement: LayerNormPlacement,
) {
    common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &config, options(placement, AttentionKind::PerHead));
    let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, Device::Cpu));
    let (out, weights) = layer.forward_with_weights(&x, None, false);
    assert_eq!(out.size(), [batch, seq, config.hidden_size]);
    assert_eq!(weights.size(), [batch, config.num_attention_heads, seq, seq]);
    assert_eq!(layer.forward_t(&x, false).size(), out.size());
}

/// The two placements written out by hand, from the layer's own parts.
fn by_hand(layer: &TransformerEncoderLayer, x: &Tensor) -> Tensor {
    let attention = |h: &Tensor| layer.attention.forward_with_weights(h, None, false).0;
    let ff = |h: &Tensor| layer.feed_forward.forward_t(h, false);
    let (ln1, ln2) = (&layer.layer_norm_1, &layer.layer_norm_2);
    match layer.placement {
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
    common::seed();
    let config = BertConfig::tiny();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &config, options(placement, attention));
    let x = Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu));
    common::assert_close(&layer.forward(&x, None, false), &by_hand(&layer, &x), 1e-5);
}

#[test]
fn pre_and_post_layer_norm_differ_with_the_same_weights() {
    common::seed();
    let config = BertConfig::tiny();
    let vs = nn::VarStore::new(Device::Cpu);
    let mut layer =
        TransformerEncoderLayer::new(vs.root(), &config, options(LayerNormPlacement::Pre, AttentionKind::Fused));
    let x = Tensor::randn([1, 5, config.hidden_size], (Kind::Float, Device::Cpu)) * 3;
    let pre = layer.forward(&x, None, false);
    layer.placement = LayerNormPlacement::Post;
    assert!(common::max_abs_diff(&pre, &layer.forward(&x, None, false)) > 1e-2);
}

#[test]
fn post_layer_norm_output_is_normalized_per_token() {
    common::seed();
    let config = BertConfig::tiny();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &config, EncoderOptions::bert());
    let out = layer.forward(&(Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu)) * 10), None, false);
    let mean = out.mean_dim(-1, false, Kind::Float);
    let var = out.var_dim(-1, false, false);
    common::assert_close(&mean, &mean.zeros_like(), 1e-5);
    common::assert_close(&var, &var.ones_like(), 1e-3);
}

#[test]
fn parameters_have_hugging_face_names() {
    common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer =
        TransformerEncoderLayer::new(vs.root() / "encoder" / "layer" / 0, &BertConfig::tiny(), EncoderOptions::bert());
    assert!(matches!(layer.attention, Attention::Fused(_)));
    let mut names: Vec<String> =
        vs.variables().into_keys().map(|n| n.trim_start_matches("encoder.layer.0.").to_string()).collect();
    names.sort();
    snapshot!("encoder_layer_parameter_names", names.join("\n"));
}

#[test]
fn encoder_layer_shapes_snapshot() {
    common::seed();
    let config = BertConfig::bert_base_uncased();
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = TransformerEncoderLayer::new(vs.root(), &config, EncoderOptions::book());
    let x = Tensor::randn([1, 5, 768], (Kind::Float, Device::Cpu));
    let (out, weights) = layer.forward_with_weights(&x, None, false);
    snapshot!(
        "encoder_layer_shapes",
        format!("input {}\noutput {}\nattention weights {}", shape(&x), shape(&out), shape(&weights))
    );
}
