//! The chapter's steps in order on one text, written out as `anatomy tour` prints them: for each step the
//! operation, the output shape and the first values — the same calls the notebooks and the tests make.
//!
//! Like the chapter, the tour uses bert-base-uncased's configuration with random (seeded) weights: the
//! shapes are the real ones, the values only show what each operation does to them (it says so where
//! they start, at step 3). Its last step trains a small encoder-decoder for a few seconds and decodes with
//! it greedily. The command draws its progress: the library reports it ([`TourProgress`]).
use std::io::Write;

use anyhow::{ensure, Result};
use tch::nn::{self, Module, ModuleT};
use tch::{Device, IndexOp, Kind, Tensor};

use transformer_anatomy::decoding::greedy;
use transformer_anatomy::inspect::{format_values, max_abs_diff, preview_first_row, shape, values};
use transformer_anatomy::scaled_dot_product::apply_mask;
use transformer_anatomy::training::data::{Task, BOS, EOS};
use transformer_anatomy::training::{encode_source, train_with_progress, Progress, TrainOptions};
use transformer_anatomy::{
    attend, attention_scores, attention_weights, causal_mask, check_input_ids, masked_attention_weights,
    scaled_dot_product_attention, token_embedding, Attention, AttentionHead, BertConfig, EncoderOptions, FeedForward,
    FusedMultiHeadAttention, MultiHeadAttention, Pass, Tokenizer, TransformerEncoder, TransformerEncoderLayer,
    TransformerForSequenceClassification,
};

/// How many steps the last step trains for (a few seconds on a laptop's CPU).
pub const TRAINING_STEPS: u64 = 200;

fn heading(out: &mut dyn Write, number: &str, title: &str) -> std::io::Result<()> {
    writeln!(out, "\n── {number} {title} {}", "─".repeat(60usize.saturating_sub(title.len() + number.len())))
}

fn show(out: &mut dyn Write, op: &str, t: &Tensor) -> std::io::Result<()> {
    writeln!(out, "   op     {op}")?;
    writeln!(out, "   shape  {}", shape(t))?;
    writeln!(out, "   values {}", preview_first_row(t, 5))
}

/// What the tour reports while it computes, for the command to draw (`anatomy tour` draws a spinner for a
/// wait and a bar for the training); it writes nothing to `out` between a `Working` and its `Done`.
pub enum TourProgress<'a> {
    /// A step computes for a while before it has anything to print: what it is doing.
    Working(&'a str),
    /// That wait is over; the step prints next.
    Done,
    /// The last step's training, every few steps.
    Training(&'a Progress),
}

/// Walks `text` through the chapter's sixteen steps with weights seeded by `seed`, writing each step to
/// `out` as it goes; `progress` hears the long waits and the last step's training. The steps run in the
/// chapter's order, and so draw their random weights in it: one seed, one tour.
pub fn tour(
    tokenizer: &Tokenizer,
    text: &str,
    seed: i64,
    device: Device,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(TourProgress),
) -> Result<()> {
    tch::manual_seed(seed);
    let _guard = tch::no_grad_guard();
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let ids = tokenize_with_config(out, tokenizer, text, &config, device)?;
    let vs = nn::VarStore::new(device);
    let root = vs.root();
    let (x, scores) = attention_by_hand(out, &root, &config, &ids, seed)?;
    heads_and_layer(out, &root, &config, &x)?;
    encoder_and_classifier(out, &root, &config, &ids, progress)?;
    causal_mask_step(out, &scores, ids.size()[1], device)?;
    cross_attention(out, &root, &config, &x, device)?;
    train_and_decode(out, seed, device, &mut |p| progress(TourProgress::Training(p)))
}

/// The tour's start: the text's token ids `[1, seq]`, and the configuration every later step reads.
fn tokenize_with_config(
    out: &mut dyn Write,
    tokenizer: &Tokenizer,
    text: &str,
    config: &BertConfig,
    device: Device,
) -> Result<Tensor> {
    heading(out, "1", "tokenize")?;
    let encoding = tokenizer.encode(text, false)?;
    let ids = encoding.ids_tensor(device); // [1, seq]
    check_input_ids(&ids, config)?;
    writeln!(out, "   op     tokenizer(text, add_special_tokens=False)")?;
    writeln!(out, "   shape  {}", shape(&ids))?;
    writeln!(out, "   ids    {:?}", encoding.input_ids)?;
    writeln!(out, "   tokens {:?}", encoding.tokens)?;

    heading(out, "2", "config (bert-base-uncased)")?;
    writeln!(
        out,
        "   vocab_size {}, hidden_size {}, heads {}, layers {}, intermediate {}, max positions {}",
        config.vocab_size,
        config.hidden_size,
        config.num_attention_heads,
        config.num_hidden_layers,
        config.intermediate_size,
        config.max_position_embeddings
    )?;
    Ok(ids)
}

/// The token embeddings `x`, then attention by hand on them (scores, softmax, weighted sum) and as one
/// call. Returns `x` and the scores, which the later steps read again.
fn attention_by_hand(
    out: &mut dyn Write,
    root: &nn::Path,
    config: &BertConfig,
    ids: &Tensor,
    seed: i64,
) -> Result<(Tensor, Tensor)> {
    let h = config.hidden_size;
    heading(out, "3", "token embedding")?;
    random_weights_note(out, seed)?;
    let embed = token_embedding(root / "step3", config);
    let x = embed.forward(ids); // [1, seq, 768]
    show(out, &format!("Embedding({}, {h})(ids)", config.vocab_size), &x)?;

    heading(out, "4", "attention scores (query = key = value = embeddings)")?;
    let scores = attention_scores(&x, &x);
    show(out, &format!("bmm(q, kᵀ) / √{h}"), &scores)?;

    heading(out, "5", "softmax")?;
    let weights = attention_weights(&scores);
    show(out, "softmax(scores, dim=-1)", &weights)?;
    let sums = format_values(&weights.sum_dim_intlist(-1, false, Kind::Float));
    writeln!(out, "   sums   {sums} (each row sums to 1)")?;

    heading(out, "6", "weighted sum of values")?;
    let updated = attend(&weights, &x);
    show(out, "bmm(weights, v)", &updated)?;

    heading(out, "7", "scaled dot-product attention")?;
    let ours = scaled_dot_product_attention(&x, &x, &x, None);
    let libtorch = Tensor::scaled_dot_product_attention(&x, &x, &x, None::<Tensor>, 0.0, false, None, false);
    show(out, "scaled_dot_product_attention(q, k, v, mask=None)", &ours)?;
    writeln!(out, "   check  max |ours − libtorch's| = {:.2e}", max_abs_diff(&ours, &libtorch))?;
    Ok((x, scores))
}

/// Where the random weights start: what they are, and where the pretrained model comes instead. Steps 3 to
/// 15 draw their weights (14 masks step 4's scores), and 16 trains a small model of its own from scratch.
fn random_weights_note(out: &mut dyn Write, seed: i64) -> std::io::Result<()> {
    writeln!(out, "   note   steps 3 to 15 run on random weights (seed {seed}) of bert-base-uncased's sizes, as")?;
    writeln!(out, "          the chapter's do: the shapes are the real ones, the values only show what each step")?;
    writeln!(out, "          does. The pretrained all-MiniLM-L6-v2, whose tokenizer step 1 used, comes later:")?;
    writeln!(out, "          chapter 09, and `cargo anatomy encode`.")
}

/// One attention head, twelve of them (per head and fused, with the same weights), the feed-forward block
/// and an encoder layer, each on the embeddings `x`.
fn heads_and_layer(out: &mut dyn Write, root: &nn::Path, config: &BertConfig, x: &Tensor) -> Result<()> {
    heading(out, "8", "attention head and multi-head attention")?;
    let head = AttentionHead::new(root / "step8" / "head", config.hidden_size, config.head_dim(), 0.0);
    show(out, "AttentionHead(768 → 64)(x)", &head.forward(x, x, None, Pass::EVAL).output)?;
    let layer_config = config.layer(); // the book's: pre-LN, per-head attention
    let mut per_head = MultiHeadAttention::new(root / "step8" / "per_head", &layer_config);
    let fused = FusedMultiHeadAttention::new(root / "step8" / "fused", &layer_config);
    per_head.copy_from_fused(&fused);
    let attn_output = per_head.forward(x, x, None, Pass::EVAL).output;
    show(out, "MultiHeadAttention: 12 heads, concat, output linear", &attn_output)?;
    writeln!(
        out,
        "   check  max |per-head − fused| with the same weights = {:.2e}",
        max_abs_diff(&attn_output, &fused.forward(x, x, None, Pass::EVAL).output)
    )?;

    heading(out, "9", "feed-forward")?;
    let feed_forward = FeedForward::new(root / "step9", &layer_config);
    show(out, "linear(768 → 3072), GELU, linear(3072 → 768)", &feed_forward.forward(&attn_output))?;

    heading(out, "10", "encoder layer (pre-layer-norm, as in the chapter)")?;
    let layer = TransformerEncoderLayer::new(root / "step10", &layer_config);
    show(out, "x + attention(LN(x)); x + feed_forward(LN(x))", &layer.forward(x, None, false).hidden_state)?;
    Ok(())
}

/// The embeddings with positions, the whole encoder and a classification head, on the token ids. Drawing
/// the encoder's random weights is the tour's longest wait before its training (a second on an idle laptop,
/// several on a busy one): `progress` hears it, and the classifier's.
fn encoder_and_classifier(
    out: &mut dyn Write,
    root: &nn::Path,
    config: &BertConfig,
    ids: &Tensor,
    progress: &mut dyn FnMut(TourProgress),
) -> Result<()> {
    heading(out, "11", "embeddings with positions")?;
    let layers = config.num_hidden_layers;
    progress(TourProgress::Working(&format!("drawing random weights for the embeddings and {layers} layers")));
    let encoder = TransformerEncoder::new(root / "step12", config)?;
    let embedded = encoder.embeddings.forward_t(ids, false);
    progress(TourProgress::Done);
    show(out, "LayerNorm(token_emb(ids) + position_emb(arange(seq)))", &embedded)?;

    heading(out, "12", "transformer encoder")?;
    show(out, "embeddings, then 12 encoder layers", &encoder.try_forward(ids, None, None, false)?.last_hidden_state)?;

    heading(out, "13", "classification head (num_labels = 3)")?;
    progress(TourProgress::Working("drawing random weights for the classifier"));
    let classifier_config = BertConfig { num_labels: 3, num_hidden_layers: 1, ..config.clone() };
    let classifier = TransformerForSequenceClassification::new(root / "step13", &classifier_config)?;
    let logits = classifier.try_forward(ids, false)?;
    progress(TourProgress::Done);
    show(out, "linear(dropout(hidden_state[:, 0, :]))", &logits)?;
    Ok(())
}

/// The causal mask over `seq` positions, applied to the attention scores of [`attention_by_hand`].
fn causal_mask_step(out: &mut dyn Write, scores: &Tensor, seq: i64, device: Device) -> Result<()> {
    heading(out, "14", "causal mask")?;
    let mask = causal_mask(seq, device);
    writeln!(out, "   op     tril(ones({seq}, {seq}))")?;
    for row in 0..seq {
        let cells: Vec<String> = values(&mask.i(row)).iter().map(|v| format!("{v:.0}")).collect();
        writeln!(out, "          {}", cells.join(" "))?;
    }
    let masked = apply_mask(scores, &mask);
    writeln!(out, "   scores.masked_fill(mask == 0, -inf), row 0: {}", preview_first_row(&masked, 5))?;
    let masked_weights = masked_attention_weights(scores, &mask);
    writeln!(
        out,
        "   softmax, row 1:                        {}",
        format_values(&masked_weights.i((0, 1.min(seq - 1))))
    )?;
    let above = (&masked_weights * mask.ones_like().g_sub(&mask)).abs().sum(Kind::Float).double_value(&[]);
    ensure!(above == 0.0, "weights above the diagonal should be exactly 0, got a sum of {above}");
    writeln!(out, "   check  every weight above the diagonal is exactly 0")?;
    Ok(())
}

/// Encoder-decoder attention: three random decoder positions attending to the encoder's `x`.
fn cross_attention(
    out: &mut dyn Write,
    root: &nn::Path,
    config: &BertConfig,
    x: &Tensor,
    device: Device,
) -> Result<()> {
    heading(out, "15", "encoder-decoder attention")?;
    let seq = x.size()[1];
    let cross = FusedMultiHeadAttention::new(root / "step15", &config.layer());
    let target_len = 3;
    let decoder_states = transformer_anatomy::init::randn(&[1, target_len, config.hidden_size], device);
    let attended = cross.forward(&decoder_states, x, None, Pass::WEIGHTS);
    let (cross_out, cross_weights) = (attended.output, attended.weights.expect("the pass asked for weights"));
    writeln!(
        out,
        "   op     queries from {target_len} decoder positions, keys and values from the {seq} encoder positions"
    )?;
    writeln!(
        out,
        "   shape  weights {} (rectangular: target × source), output {}",
        shape(&cross_weights),
        shape(&cross_out)
    )?;
    writeln!(out, "   values row 0 of head 0: {}", preview_first_row(&cross_weights, 5))?;
    Ok(())
}

/// The tour's end: a small encoder-decoder learns the copy task here and now (a few seconds; `anatomy
/// train` has more), then copies the digits of π greedily, one token at a time.
fn train_and_decode(out: &mut dyn Write, seed: i64, device: Device, progress: &mut dyn FnMut(&Progress)) -> Result<()> {
    heading(out, "16", "training, then greedy decoding")?;
    // Without dropout: copying needs no regulariser, and dropout's masks are drawn on the model's device,
    // so with it a GPU would print other losses than the CPU; without it, every number matches.
    let options = TrainOptions {
        d_model: 32,
        layers: 1,
        steps: TRAINING_STEPS,
        warmup: 80,
        eval_size: 200,
        dropout: 0.0,
        seed: seed as u64,
        device,
        ..TrainOptions::for_task(Task::Copy)
    };
    writeln!(
        out,
        "   op     train {} steps on pairs of 10 digits → the same 10 digits (batch 64, Adam, warm-up)",
        options.steps
    )?;
    let (trained, report) = tch::with_grad(|| train_with_progress(&options, progress))?;
    let (first, last) = (report.steps[0].loss, report.steps[report.steps.len() - 1].loss);
    writeln!(out, "   loss   {first:.3} → {last:.3} (label-smoothed cross-entropy)")?;
    writeln!(
        out,
        "   held-out {} pairs: exact match {:.1} %, token accuracy {:.1} %",
        options.eval_size,
        100.0 * report.eval.exact_match,
        100.0 * report.eval.token_accuracy
    )?;
    let vocab = Task::Copy.vocab();
    let digits = "3 1 4 1 5 9 2 6 5 3";
    let source = encode_source(&trained, digits)?;
    let decoded = greedy(&trained.model, &source, BOS, EOS, 11, true)?.remove(0);
    let steps = &decoded.steps;
    writeln!(out, "   op     start from <s>, append the most probable token, repeat until </s>")?;
    writeln!(out, "   source {digits}")?;
    for (i, step) in steps.iter().enumerate() {
        let input: Vec<&str> = step.decoder_input.iter().map(|&id| vocab.token(id)).collect();
        writeln!(out, "   step {:<2} decoder input [{}] → {}", i + 1, input.join(" "), vocab.token(step.next_token))?;
    }
    let written: Vec<i64> = steps.iter().map(|s| s.next_token).filter(|&t| t != EOS).collect();
    let output = Task::Copy.detokenize(&vocab.decode(&written));
    let verdict = if output == digits { "right" } else { "wrong" };
    writeln!(out, "   output {output} ({verdict})")?;
    Ok(())
}
