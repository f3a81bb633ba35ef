//! Where the book's listings, the lecture notes and the slides differ from the chapters (the table at the
//! end of the overview chapter): the differences the chapters show in a cell, held here too.
mod common;

use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::max_abs_diff;
use transformer_anatomy::{
    decoder_mask, masked_attention_weights, padding_mask, sinusoidal_positions, BertConfig, EncoderDecoder,
    EncoderOptions, EncoderStack, Seq2SeqConfig, StackConfig, TransformerEncoder,
};

/// LibTorch's layer norm divides the variance by n and puts ε under the root; the notes' version (σ with
/// n − 1, ε after the root) is the same vectors shrunk by √((n − 1)/n).
#[test]
fn layer_norm_is_the_biased_variance_with_eps_under_the_root() {
    let _generator = common::seed();
    for n in [4i64, 768] {
        let row = Tensor::linspace(-3.0, 3.0, n, (Kind::Double, Device::Cpu));
        let eps = 1e-12;
        let libtorch = row.layer_norm([n], None::<Tensor>, None::<Tensor>, eps, false);
        let centred = &row - row.mean_dim(-1, true, Kind::Double);
        let biased = &centred / (row.var_correction(-1, 0, true) + eps).sqrt();
        let notes = &centred / (row.var_correction(-1, 1, true).sqrt() + eps);
        assert!(max_abs_diff(&libtorch, &biased) < 1e-9, "n = {n}");
        let shrink = ((n - 1) as f64 / n as f64).sqrt();
        assert!(max_abs_diff(&(&biased * shrink), &notes) < 1e-9, "n = {n}");
        assert!(max_abs_diff(&libtorch, &notes) > 1e-4, "n = {n}: the two versions must differ");
    }
}

/// The slides' table (all sines, then all cosines) is ours (interleaved) with its columns reordered.
#[test]
fn the_slides_sinusoid_table_is_a_column_permutation_of_ours() {
    let _generator = common::seed();
    let (positions, d) = (50i64, 64i64);
    let interleaved = sinusoidal_positions(positions, d, Device::Cpu);
    let pos = Tensor::arange(positions, (Kind::Float, Device::Cpu)).unsqueeze(1); // [50, 1]
    let two_i = Tensor::arange_start_step(0, d, 2, (Kind::Float, Device::Cpu)); // [32]
    let angle = pos * (two_i * (-(10000f64.ln()) / d as f64)).exp().unsqueeze(0); // [50, 32]
    let halves = Tensor::cat(&[angle.sin(), angle.cos()], 1); // [50, 64]
    let order: Vec<i64> = (0..d).step_by(2).chain((1..d).step_by(2)).collect();
    let reordered = interleaved.index_select(1, &Tensor::from_slice(&order));
    assert!(max_abs_diff(&reordered, &halves) < 1e-5);
    assert!(max_abs_diff(&interleaved, &halves) > 0.5, "the two layouts differ column by column");
}

/// −10⁹ (the notes) and −∞ (here) agree when a row keeps a position; when every position is masked,
/// −10⁹ averages them and we give zeros.
#[test]
fn a_row_that_may_see_nothing_gets_zeros_not_an_average() {
    let _generator = common::seed();
    let scores = Tensor::from_slice(&[0.5f32, -1.0, 2.0]).view([1, 1, 3]);
    let notes = |mask: &Tensor| scores.masked_fill(&mask.eq(0), -1e9).softmax(-1, Kind::Float);
    let nothing = Tensor::zeros([1, 1, 3], (Kind::Float, Device::Cpu));
    assert_eq!(max_abs_diff(&masked_attention_weights(&scores, &nothing), &nothing), 0.0);
    let third = Tensor::full([1, 1, 3], 1.0 / 3.0, (Kind::Float, Device::Cpu));
    assert!(max_abs_diff(&notes(&nothing), &third) < 1e-6);
    let one_hidden = Tensor::from_slice(&[1.0f32, 1.0, 0.0]).view([1, 1, 3]);
    assert!(max_abs_diff(&masked_attention_weights(&scores, &one_hidden), &notes(&one_hidden)) < 1e-7);
}

/// Issue #129 of the book's notebooks: the embeddings end with a LayerNorm and the first pre-LN layer
/// starts with one. At the start of training the second changes nothing.
#[test]
fn the_first_pre_ln_norm_meets_already_normalized_embeddings() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let encoder = TransformerEncoder::new(vs.root(), &config).unwrap();
    let ids = Tensor::from_slice(&[5i64, 17, 42, 7]).view([1, 4]);
    let embedded = encoder.embeddings.forward_t(&ids, false); // [1, 4, 32]
    let again = encoder.stack.layers[0].attention_residual.layer_norm.forward(&embedded);
    assert!(max_abs_diff(&embedded, &again) < 1e-4);
}

/// A pre-LN stack leaves its output at whatever scale the residual stream has; a final LayerNorm puts
/// every token's vector back at variance 1.
#[test]
fn only_a_final_layer_norm_normalizes_a_pre_ln_stack() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let x = Tensor::randn([2, 5, config.hidden_size], (Kind::Float, Device::Cpu)) * 3.0;
    let stack = |final_layer_norm| StackConfig { layer: config.layer(), num_layers: 2, final_layer_norm };
    let without = EncoderStack::new(vs.root() / "without", &stack(false));
    let with_norm = EncoderStack::new(vs.root() / "with", &stack(true));
    let variance = |t: &Tensor| t.var_correction(-1, 0, true); // [2, 5, 1]
    let normalized = variance(&with_norm.forward(&x, None, false).last_hidden_state);
    assert!(max_abs_diff(&normalized, &normalized.ones_like()) < 1e-3);
    let left = variance(&without.forward(&x, None, false).last_hidden_state);
    assert!(max_abs_diff(&left, &left.ones_like()) > 0.5, "a pre-LN stack does not normalize its output");
}

/// The notes' target mask for their example, `[[1, 1, 1, 0, 0]]`, hides padding only: position 0 reads
/// the token at position 1, the one it should predict. The causal mask times the padding mask
/// (`decoder_mask`, what `forward` builds) keeps position 0 from it.
#[test]
fn the_notes_padding_only_target_mask_lets_a_position_see_the_future() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::paper(10, 10)).unwrap();
    let source = Tensor::from_slice(&[1i64, 2, 3, 4, 5]).view([1, 5]);
    let target = Tensor::from_slice(&[6i64, 7, 8, 0, 0]).view([1, 5]);
    let changed = Tensor::from_slice(&[6i64, 9, 8, 0, 0]).view([1, 5]); // position 1: 7 → 9
    let notes_mask = Tensor::from_slice(&[1.0f32, 1.0, 1.0, 0.0, 0.0]).view([1, 1, 5]);
    assert_eq!(max_abs_diff(&padding_mask(&target, 0), &notes_mask), 0.0, "the notes' mask is padding only");
    let source_mask = padding_mask(&source, 0);
    let memory = model.encode(&source, Some(&source_mask), false);
    // Position 0's log-probabilities, for a target and a self-attention mask.
    let first = |target: &Tensor, mask: &Tensor| {
        let out = model.decode(&memory, Some(&source_mask), target, Some(mask), false);
        model.generate(&out.hidden_state).get(0).get(0) // [10]
    };
    let notes = max_abs_diff(&first(&target, &padding_mask(&target, 0)), &first(&changed, &padding_mask(&changed, 0)));
    let ours = max_abs_diff(&first(&target, &decoder_mask(&target, 0)), &first(&changed, &decoder_mask(&changed, 0)));
    assert!(notes > 1e-3, "with padding only, position 0 sees position 1 (moved by {notes})");
    assert!(ours < 1e-6, "the causal mask keeps position 1 from position 0 (moved by {ours})");
}

/// The notes' text starts the embeddings from N(0, 1); their code, and ours, redraw the tables
/// Xavier-uniform with every other matrix: within √(6 / (rows + cols)), and filling that range.
#[test]
fn the_target_embedding_table_is_redrawn_xavier_uniform() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let model = EncoderDecoder::new(&vs, &Seq2SeqConfig::paper(10, 10)).unwrap();
    let table = &model.target_embedding.tokens.ws; // [10, 512]
    let size = table.size();
    assert_eq!(size, [10, 512]);
    let bound = (6.0f64 / (size[0] + size[1]) as f64).sqrt();
    let largest = table.abs().max().to_kind(Kind::Double).double_value(&[]);
    assert!(largest <= bound, "largest entry {largest} is past Xavier's bound {bound}");
    assert!(largest > 0.8 * bound, "largest entry {largest} does not fill Xavier's range (bound {bound})");
}
