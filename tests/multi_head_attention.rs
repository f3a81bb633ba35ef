//! Chapter section 3: attention heads and multi-head attention, per head and fused.
mod common;

use rstest::rstest;
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::shape;
use transformer_anatomy::{
    causal_mask, padding_mask, Attention, AttentionHead, BertConfig, EncoderOptions, FusedMultiHeadAttention,
    MultiHeadAttention, Pass,
};

fn configs() -> [BertConfig; 2] {
    [BertConfig::bert_base_uncased(EncoderOptions::book()), BertConfig::tiny(EncoderOptions::book())]
}

/// A per-head and a fused block holding the same weights.
fn same_weights(vs: &nn::VarStore, config: &BertConfig) -> (MultiHeadAttention, FusedMultiHeadAttention) {
    let mut per_head = MultiHeadAttention::new(vs.root() / "per_head", &config.layer());
    let fused = FusedMultiHeadAttention::new(vs.root() / "fused", &config.layer());
    per_head.copy_from_fused(&fused);
    (per_head, fused)
}

#[rstest]
fn a_head_projects_to_head_dim(#[values(1, 2)] batch: i64, #[values(1, 5)] seq: i64, #[values(0, 1)] which: usize) {
    let _generator = common::seed();
    let config = &configs()[which];
    let vs = nn::VarStore::new(Device::Cpu);
    let head = AttentionHead::new(vs.root(), config.hidden_size, config.head_dim(), 0.1);
    let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, Device::Cpu));
    let out = head.forward(&x, &x, None, Pass::WEIGHTS);
    let (out, weights) = (out.output, out.weights.unwrap());
    assert_eq!(out.size(), [batch, seq, config.head_dim()]);
    assert_eq!(weights.size(), [batch, seq, seq]);
    assert_eq!(head.forward_t(&x, false).size(), out.size());
}

#[rstest]
fn per_head_equals_fused(
    #[values(1, 3)] batch: i64,
    #[values(1, 5, 33)] seq: i64,
    #[values(0, 1)] which: usize,
    #[values(false, true)] causal: bool,
) {
    let _generator = common::seed();
    let config = &configs()[which];
    let vs = nn::VarStore::new(Device::Cpu);
    let (per_head, fused) = same_weights(&vs, config);
    let x = Tensor::randn([batch, seq, config.hidden_size], (Kind::Float, Device::Cpu));
    let mask = causal.then(|| causal_mask(seq, Device::Cpu));
    let a = per_head.forward(&x, &x, mask.as_ref(), Pass::WEIGHTS);
    let b = fused.forward(&x, &x, mask.as_ref(), Pass::WEIGHTS);
    let (a, wa, b, wb) = (a.output, a.weights.unwrap(), b.output, b.weights.unwrap());
    assert_eq!(a.size(), [batch, seq, config.hidden_size]);
    assert_eq!(wa.size(), [batch, config.num_attention_heads, seq, seq]);
    common::assert_close(&a, &b, 1e-5);
    common::assert_close(&wa, &wb, 1e-5);
    // Without asking for the weights, an evaluation pass runs libtorch's own attention kernel instead of
    // the chapter's steps: no weights come back, and the output is the same.
    let plain = fused.forward(&x, &x, mask.as_ref(), Pass::EVAL);
    assert!(plain.weights.is_none());
    common::assert_close(&plain.output, &b, 1e-5);
}

#[test]
fn the_kernel_and_the_chapter_steps_agree_on_padding_and_on_a_query_that_sees_nothing() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let fused = FusedMultiHeadAttention::new(vs.root(), &config.layer());
    let x = Tensor::randn([3, 6, config.hidden_size], (Kind::Float, Device::Cpu));
    // Sequence 0 is whole, sequence 1 has two pad positions, sequence 2 is all padding (no key to see).
    let ids = Tensor::from_slice(&[5i64, 6, 7, 8, 9, 10, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0]).view([3, 6]);
    let mask = padding_mask(&ids, 0); // [3, 1, 6]
    let steps = fused.forward(&x, &x, Some(&mask), Pass::WEIGHTS).output;
    let kernel = fused.forward(&x, &x, Some(&mask), Pass::EVAL).output;
    common::assert_close(&kernel, &steps, 1e-5);
    // The blind sequence's context is zero in both, so its output is the output projection's bias alone.
    let bias = fused.output.bs.as_ref().unwrap().expand([6, config.hidden_size], false);
    common::assert_close(&kernel.get(2), &bias, 1e-6);
    // Padding changes sequence 1: without the mask, its output differs.
    let unmasked = fused.forward(&x, &x, None, Pass::EVAL).output;
    assert!(common::max_abs_diff(&unmasked.get(1), &kernel.get(1)) > 1e-3);
    common::assert_close(&unmasked.get(0), &kernel.get(0), 1e-5);
}

#[test]
fn training_without_dropout_runs_the_kernel_with_the_same_outputs_and_gradients() {
    let _generator = common::seed();
    // With no dropout to apply, a training pass that does not ask for the weights also runs libtorch's
    // kernel (chapter 11's GPT trains this way). Its outputs and every gradient must match the chapter's
    // steps, which a pass asking for the weights still takes, under the causal mask of a decoder.
    let config = BertConfig {
        attention_probs_dropout_prob: 0.0,
        hidden_dropout_prob: 0.0,
        ..BertConfig::tiny(EncoderOptions::book())
    };
    let vs = nn::VarStore::new(Device::Cpu);
    let fused = FusedMultiHeadAttention::new(vs.root(), &config.layer());
    let mask = causal_mask(5, Device::Cpu);
    let run = |pass: Pass| {
        let x = Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let out = fused.forward(&x, &x, Some(&mask), pass);
        assert_eq!(out.weights.is_some(), pass.weights);
        // A weighted sum, so that each output number gets its own gradient.
        let loss = (&out.output * Tensor::linspace(-1.0, 1.0, config.hidden_size, (Kind::Float, Device::Cpu)))
            .sum(Kind::Float);
        for mut w in vs.trainable_variables() {
            w.zero_grad();
        }
        loss.backward();
        let mut grads = vec![out.output.detach(), x.grad()];
        grads.extend(vs.trainable_variables().iter().map(|w| w.grad()));
        grads
    };
    tch::manual_seed(1);
    let kernel = run(Pass::TRAIN);
    tch::manual_seed(1);
    let steps = run(Pass { train: true, weights: true });
    assert_eq!(kernel.len(), 2 + 8, "output, input gradient, and 4 weights + 4 biases");
    for (k, s) in kernel.iter().zip(&steps) {
        assert!(s.abs().sum(Kind::Float).double_value(&[]) > 0.0, "every gradient is non-zero");
        common::assert_close(k, s, 1e-5);
    }
}

#[test]
fn without_copying_the_weights_the_two_differ() {
    let _generator = common::seed();
    // Guards the test above: it passes because of the copy, not because both ignore their weights.
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let per_head = MultiHeadAttention::new(vs.root() / "a", &config.layer());
    let fused = FusedMultiHeadAttention::new(vs.root() / "b", &config.layer());
    let x = Tensor::randn([1, 5, config.hidden_size], (Kind::Float, Device::Cpu));
    assert!(common::max_abs_diff(&per_head.forward_t(&x, false), &fused.forward_t(&x, false)) > 1e-3);
}

#[test]
fn each_head_sees_only_its_slice_of_the_fused_weights() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let (per_head, fused) = same_weights(&vs, &config);
    let x = Tensor::randn([2, 4, config.hidden_size], (Kind::Float, Device::Cpu));
    let d = config.head_dim();
    for (i, head) in per_head.heads.iter().enumerate() {
        let q_fused = x.matmul(&fused.query.ws.tr()) + fused.query.bs.as_ref().unwrap();
        let q_slice = q_fused.narrow(-1, i as i64 * d, d);
        common::assert_close(&head.query.forward_t(&x, false), &q_slice, 1e-5);
    }
}

#[test]
fn weights_rows_sum_to_one_per_head() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let (per_head, _) = same_weights(&vs, &config);
    let x = Tensor::randn([2, 6, config.hidden_size], (Kind::Float, Device::Cpu));
    let weights = per_head.forward(&x, &x, None, Pass::WEIGHTS).weights.unwrap();
    let sums = weights.sum_dim_intlist(-1, false, Kind::Float);
    common::assert_close(&sums, &sums.ones_like(), 1e-5);
}

#[test]
fn dropout_only_acts_in_training() {
    let _generator = common::seed();
    let config = BertConfig { attention_probs_dropout_prob: 0.5, ..BertConfig::tiny(EncoderOptions::book()) };
    let vs = nn::VarStore::new(Device::Cpu);
    let (_, fused) = same_weights(&vs, &config);
    let x = Tensor::randn([2, 8, config.hidden_size], (Kind::Float, Device::Cpu));
    common::assert_close(&fused.forward_t(&x, false), &fused.forward_t(&x, false), 0.0);
    assert!(common::max_abs_diff(&fused.forward_t(&x, true), &fused.forward_t(&x, false)) > 1e-4);
}

#[test]
fn parameters_have_hugging_face_names() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    FusedMultiHeadAttention::new(vs.root() / "attention", &config.layer());
    let mut names: Vec<String> = vs.variables().into_keys().collect();
    names.sort();
    assert_eq!(
        names,
        [
            "attention.output.dense.bias",
            "attention.output.dense.weight",
            "attention.self.key.bias",
            "attention.self.key.weight",
            "attention.self.query.bias",
            "attention.self.query.weight",
            "attention.self.value.bias",
            "attention.self.value.weight",
        ]
    );
}

#[test]
fn multi_head_attention_shapes_snapshot() {
    let _generator = common::seed();
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let (per_head, fused) = same_weights(&vs, &config);
    let x = Tensor::randn([1, 5, 768], (Kind::Float, Device::Cpu));
    let head_out = per_head.heads[0].forward(&x, &x, None, Pass::EVAL).output;
    let out = per_head.forward(&x, &x, None, Pass::WEIGHTS);
    let (out, weights) = (out.output, out.weights.unwrap());
    let fused_out = fused.forward(&x, &x, None, Pass::EVAL).output;
    snapshot!(
        "multi_head_attention_shapes",
        format!(
            "heads {}\nhead query weight {}\none head's output {}\nmulti-head output {}\nmulti-head weights {}\nfused query weight {}\nfused output {}",
            per_head.heads.len(), shape(&per_head.heads[0].query.ws), shape(&head_out), shape(&out), shape(&weights), shape(&fused.query.ws), shape(&fused_out)
        )
    );
}

/// The chapter's modules start from PyTorch's defaults (`nn.Linear`: weights and biases uniform in
/// ±1/√fan_in; `nn.Embedding`: N(0, 1)), not from tch's Kaiming default (√6 times wider).
#[test]
fn parameters_start_from_pytorchs_default_initialisation() {
    let _generator = common::seed();
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let classifier = transformer_anatomy::TransformerForSequenceClassification::new(
        vs.root(),
        &BertConfig { num_hidden_layers: 1, ..config.clone() },
    )
    .unwrap();
    FusedMultiHeadAttention::new(vs.root() / "fused", &config.layer());
    let mut linear_weights = 0;
    for (name, t) in vs.variables() {
        let size = t.size();
        let max = t.abs().max().double_value(&[]);
        if name.contains("LayerNorm") {
            continue;
        } else if name.contains("embeddings") {
            // N(0, 1): the sample's standard deviation is close to 1 (many thousands of draws).
            let std = t.std(true).double_value(&[]);
            assert!((std - 1.0).abs() < 0.02, "{name}: std {std}");
        } else {
            // A linear map's weight is [out, in]; its bias has the weight's fan-in, found by name.
            let fan_in = if size.len() == 2 {
                linear_weights += 1;
                size[1]
            } else {
                vs.variables()[&name.replace(".bias", ".weight")].size()[1]
            };
            let bound = 1.0 / (fan_in as f64).sqrt();
            assert!(max <= bound, "{name}: max |w| {max} exceeds 1/√{fan_in} = {bound}");
            // Uniform in ±bound, so the largest draw comes close to the bound (tch's default would exceed it).
            if t.numel() >= 768 {
                assert!(max > 0.95 * bound, "{name}: max |w| {max} is far below 1/√{fan_in} = {bound}");
            }
        }
    }
    // 12 heads × 3 projections + output, feed-forward 2, classifier 1, and the fused block's 4.
    assert_eq!(linear_weights, 12 * 3 + 1 + 2 + 1 + 4);
    drop(classifier);
}
