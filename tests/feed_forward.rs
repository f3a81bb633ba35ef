//! Chapter section 4: the feed-forward layer and its GELU.
mod common;

use rstest::rstest;
use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::{shape, values};
use transformer_anatomy::{Activation, BertConfig, EncoderOptions, FeedForward};

#[test]
fn exact_gelu_has_known_values() {
    let _generator = common::generator(); // this file seeds LibTorch's one generator
                                          // gelu(x) = x Φ(x): Φ(1) = 0.841344746, Φ(-1) = 0.158655254, Φ(2) = 0.977249868.
    let x = Tensor::from_slice(&[-1.0f64, 0.0, 1.0, 2.0]);
    let got = values(&Activation::Gelu.apply(&x));
    for (g, want) in got.iter().zip([-0.158655254, 0.0, 0.841344746, 1.954499736]) {
        assert!((g - want).abs() < 1e-8, "gelu gave {got:?}");
    }
    // The tanh approximation is close but not equal.
    let approx = values(&Activation::GeluTanh.apply(&x));
    assert!((approx[2] - 0.841192).abs() < 1e-5 && (approx[2] - got[2]).abs() > 1e-5, "tanh gelu gave {approx:?}");
}

#[rstest]
fn feed_forward_keeps_the_shape(
    #[values(1, 4)] batch: i64,
    #[values(1, 5, 20)] seq: i64,
    #[values(BertConfig::bert_base_uncased(EncoderOptions::book()), BertConfig::tiny(EncoderOptions::book()))]
    config: BertConfig,
) {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let ff = FeedForward::new(vs.root(), &config.layer());
    let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, Device::Cpu));
    assert_eq!(ff.forward_t(&x, false).size(), [batch, seq, config.hidden_size]);
    assert_eq!(ff.linear_1.ws.size(), [config.intermediate_size, config.hidden_size]);
}

#[test]
fn feed_forward_is_linear_gelu_linear() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let ff = FeedForward::new(vs.root(), &config.layer());
    let x = Tensor::randn([2, 3, config.hidden_size], (Kind::Float, Device::Cpu));
    let by_hand = ff.linear_2.forward(&ff.linear_1.forward(&x).gelu("none"));
    common::assert_close(&ff.forward_t(&x, false), &by_hand, 1e-6);
    // Leaving the GELU out (as a miscopied listing of the chapter does) gives something else.
    let no_gelu = ff.linear_2.forward(&ff.linear_1.forward(&x));
    assert!(common::max_abs_diff(&ff.forward_t(&x, false), &no_gelu) > 1e-3);
}

#[test]
fn feed_forward_treats_positions_independently() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let ff = FeedForward::new(vs.root(), &config.layer());
    let x = Tensor::randn([1, 6, config.hidden_size], (Kind::Float, Device::Cpu));
    let whole = ff.forward_t(&x, false);
    let alone = ff.forward_t(&x.narrow(1, 2, 1), false);
    common::assert_close(&whole.narrow(1, 2, 1), &alone, 1e-6);
}

#[test]
fn parameters_have_hugging_face_names() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    FeedForward::new(vs.root() / "encoder" / "layer" / 0, &BertConfig::tiny(EncoderOptions::book()).layer());
    let mut names: Vec<String> = vs.variables().into_keys().collect();
    names.sort();
    assert_eq!(
        names,
        [
            "encoder.layer.0.intermediate.dense.bias",
            "encoder.layer.0.intermediate.dense.weight",
            "encoder.layer.0.output.dense.bias",
            "encoder.layer.0.output.dense.weight"
        ]
    );
}

#[test]
fn feed_forward_shapes_snapshot() {
    let _generator = common::seed();
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let ff = FeedForward::new(vs.root(), &config.layer());
    let x = Tensor::randn([1, 5, 768], (Kind::Float, Device::Cpu));
    let wide = ff.linear_1.forward(&x);
    snapshot!(
        "feed_forward_shapes",
        format!("input {}\nafter linear_1 {}\noutput {}", shape(&x), shape(&wide), shape(&ff.forward_t(&x, false)))
    );
}
