//! `anatomy tour`: the chapter's steps in order on one text, printing for each step the operation, the
//! output shape and the first values — the same calls the notebooks and the tests make.
//!
//! Like the chapter, the tour uses bert-base-uncased's configuration with random (seeded) weights: the
//! shapes are the real ones, the values only show what each operation does to them.
use anyhow::{ensure, Result};
use tch::nn::{self, Module, ModuleT};
use tch::{Device, IndexOp, Kind, Tensor};
use transformer_anatomy::decoding::greedy;
use transformer_anatomy::inspect::{format_values, max_abs_diff, preview_first_row, shape, values};
use transformer_anatomy::model_dir::resolve_model_dir;
use transformer_anatomy::scaled_dot_product::apply_mask;
use transformer_anatomy::training::data::{Task, BOS, EOS};
use transformer_anatomy::training::{encode_source, train_with_progress, TrainOptions};
use transformer_anatomy::{
    attend, attention_scores, attention_weights, causal_mask, check_input_ids, masked_attention_weights,
    scaled_dot_product_attention, token_embedding, Attention, AttentionHead, BertConfig, EncoderOptions, FeedForward,
    FusedMultiHeadAttention, MultiHeadAttention, Pass, Tokenizer, TransformerEncoder, TransformerEncoderLayer,
    TransformerForSequenceClassification,
};

use crate::progress::TrainingBar;
use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
    /// The seed for the random weights, so that two runs print the same values.
    #[arg(long, default_value_t = 42)]
    seed: i64,
    /// The text to walk through the chapter with.
    #[arg(default_value = "time flies like an arrow")]
    text: String,
}

fn heading(number: &str, title: &str) {
    println!("\n── {number} {title} {}", "─".repeat(60usize.saturating_sub(title.len() + number.len())));
}

fn show(op: &str, t: &Tensor) {
    println!("   op     {op}");
    println!("   shape  {}", shape(t));
    println!("   values {}", preview_first_row(t, 5));
}

pub fn run(args: Args, device: Device) -> Result<()> {
    tch::manual_seed(args.seed);
    let _guard = tch::no_grad_guard();
    let tokenizer = Tokenizer::from_model_dir(resolve_model_dir(args.model.model)?)?;
    let config = BertConfig::bert_base_uncased();
    let h = config.hidden_size;

    heading("1", "tokenize");
    let encoding = tokenizer.encode(&args.text, false)?;
    let ids = encoding.ids_tensor(device); // [1, seq]
    check_input_ids(&ids, &config)?;
    println!("   op     tokenizer(text, add_special_tokens=False)");
    println!("   shape  {}", shape(&ids));
    println!("   ids    {:?}", encoding.input_ids);
    println!("   tokens {:?}", encoding.tokens);

    heading("2", "config (bert-base-uncased)");
    println!(
        "   vocab_size {}, hidden_size {h}, heads {}, layers {}, intermediate {}, max positions {}",
        config.vocab_size,
        config.num_attention_heads,
        config.num_hidden_layers,
        config.intermediate_size,
        config.max_position_embeddings
    );

    let vs = nn::VarStore::new(device);
    let root = vs.root();

    heading("3", "token embedding");
    let embed = token_embedding(&root / "step3", &config);
    let x = embed.forward(&ids); // [1, seq, 768]
    show(&format!("Embedding({}, {h})(ids)", config.vocab_size), &x);

    heading("4", "attention scores (query = key = value = embeddings)");
    let scores = attention_scores(&x, &x);
    show(&format!("bmm(q, kᵀ) / √{h}"), &scores);

    heading("5", "softmax");
    let weights = attention_weights(&scores);
    show("softmax(scores, dim=-1)", &weights);
    let sums = format_values(&weights.sum_dim_intlist(-1, false, Kind::Float));
    println!("   sums   {sums} (each row sums to 1)");

    heading("6", "weighted sum of values");
    let updated = attend(&weights, &x);
    show("bmm(weights, v)", &updated);

    heading("7", "scaled dot-product attention");
    let ours = scaled_dot_product_attention(&x, &x, &x, None);
    let libtorch = Tensor::scaled_dot_product_attention(&x, &x, &x, None::<Tensor>, 0.0, false, None, false);
    show("scaled_dot_product_attention(q, k, v, mask=None)", &ours);
    println!("   check  max |ours − libtorch's| = {:.2e}", max_abs_diff(&ours, &libtorch));

    heading("8", "attention head and multi-head attention");
    let head = AttentionHead::new(&root / "step8" / "head", h, config.head_dim(), 0.0);
    show("AttentionHead(768 → 64)(x)", &head.forward(&x, &x, None, Pass::EVAL).output);
    let mut per_head = MultiHeadAttention::new(&root / "step8" / "per_head", &config);
    let fused = FusedMultiHeadAttention::new(&root / "step8" / "fused", &config);
    per_head.copy_from_fused(&fused);
    let attn_output = per_head.forward(&x, &x, None, Pass::EVAL).output;
    show("MultiHeadAttention: 12 heads, concat, output linear", &attn_output);
    println!(
        "   check  max |per-head − fused| with the same weights = {:.2e}",
        max_abs_diff(&attn_output, &fused.forward(&x, &x, None, Pass::EVAL).output)
    );

    heading("9", "feed-forward");
    let feed_forward = FeedForward::new(&root / "step9", &config);
    show("linear(768 → 3072), GELU, linear(3072 → 768)", &feed_forward.forward(&attn_output));

    heading("10", "encoder layer (pre-layer-norm, as in the chapter)");
    let layer = TransformerEncoderLayer::new(&root / "step10", &config, EncoderOptions::book());
    show("x + attention(LN(x)); x + feed_forward(LN(x))", &layer.forward(&x, None, false).hidden_state);

    heading("11", "embeddings with positions");
    let encoder = TransformerEncoder::new(&root / "step12", &config, EncoderOptions::book())?;
    show("LayerNorm(token_emb(ids) + position_emb(arange(seq)))", &encoder.embeddings.forward_t(&ids, false));

    heading("12", "transformer encoder");
    show("embeddings, then 12 encoder layers", &encoder.try_forward(&ids, None, None, false)?.last_hidden_state);

    heading("13", "classification head (num_labels = 3)");
    let classifier_config = BertConfig { num_labels: 3, num_hidden_layers: 1, ..config.clone() };
    let classifier =
        TransformerForSequenceClassification::new(&root / "step13", &classifier_config, EncoderOptions::book())?;
    show("linear(dropout(hidden_state[:, 0, :]))", &classifier.try_forward(&ids, false)?);

    heading("14", "causal mask");
    let seq = ids.size()[1];
    let mask = causal_mask(seq, device);
    println!("   op     tril(ones({seq}, {seq}))");
    for row in 0..seq {
        let cells: Vec<String> = values(&mask.i(row)).iter().map(|v| format!("{v:.0}")).collect();
        println!("          {}", cells.join(" "));
    }
    let masked = apply_mask(&scores, &mask);
    println!("   scores.masked_fill(mask == 0, -inf), row 0: {}", preview_first_row(&masked, 5));
    let masked_weights = masked_attention_weights(&scores, &mask);
    println!("   softmax, row 1:                        {}", format_values(&masked_weights.i((0, 1.min(seq - 1)))));
    let above = (&masked_weights * mask.ones_like().g_sub(&mask)).abs().sum(Kind::Float).double_value(&[]);
    ensure!(above == 0.0, "weights above the diagonal should be exactly 0, got a sum of {above}");
    println!("   check  every weight above the diagonal is exactly 0");

    heading("15", "encoder-decoder attention");
    let cross = FusedMultiHeadAttention::new(&root / "step15", &config);
    let target_len = 3;
    let decoder_states = Tensor::randn([1, target_len, h], (Kind::Float, device));
    let attended = cross.forward(&decoder_states, &x, None, Pass::WEIGHTS);
    let (cross_out, cross_weights) = (attended.output, attended.weights.expect("the pass asked for weights"));
    println!("   op     queries from {target_len} decoder positions, keys and values from the {seq} encoder positions");
    println!(
        "   shape  weights {} (rectangular: target × source), output {}",
        shape(&cross_weights),
        shape(&cross_out)
    );
    println!("   values row 0 of head 0: {}", preview_first_row(&cross_weights, 5));

    heading("16", "training, then greedy decoding");
    // A small encoder-decoder learns the copy task here and now (a few seconds; `anatomy train` has more).
    let options = TrainOptions {
        d_model: 32,
        layers: 1,
        steps: 200,
        warmup: 80,
        eval_size: 200,
        seed: args.seed as u64,
        device,
        ..TrainOptions::for_task(Task::Copy)
    };
    println!(
        "   op     train {} steps on pairs of 10 digits → the same 10 digits (batch 64, Adam, warm-up)",
        options.steps
    );
    let mut bar = TrainingBar::new(options.steps, true);
    let (trained, report) = tch::with_grad(|| train_with_progress(&options, &mut |p| bar.update(p)))?;
    let (first, last) = (report.steps[0].loss, report.steps[report.steps.len() - 1].loss);
    println!("   loss   {first:.3} → {last:.3} (label-smoothed cross-entropy)");
    println!(
        "   held-out {} pairs: exact match {:.1} %, token accuracy {:.1} %",
        options.eval_size,
        100.0 * report.eval.exact_match,
        100.0 * report.eval.token_accuracy
    );
    let vocab = Task::Copy.vocab();
    let digits = "3 1 4 1 5 9 2 6 5 3";
    let source = encode_source(&trained, digits)?;
    let decoded = greedy(&trained.model, &source, BOS, EOS, 11, true)?.remove(0);
    let steps = &decoded.steps;
    println!("   op     start from <s>, append the most probable token, repeat until </s>");
    println!("   source {digits}");
    for (i, step) in steps.iter().enumerate() {
        let input: Vec<&str> = step.decoder_input.iter().map(|&id| vocab.token(id)).collect();
        println!("   step {:<2} decoder input [{}] → {}", i + 1, input.join(" "), vocab.token(step.next_token));
    }
    let written: Vec<i64> = steps.iter().map(|s| s.next_token).filter(|&t| t != EOS).collect();
    let output = Task::Copy.detokenize(&vocab.decode(&written));
    let verdict = if output == digits { "right" } else { "wrong" };
    println!("   output {output} ({verdict})");
    Ok(())
}
