//! `anatomy translate`: run a trained checkpoint on a text.
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;
use tch::{Device, Kind, Tensor};
use transformer_anatomy::attention_view::html_page;
use transformer_anatomy::decoding::{beam_search, greedy, BeamOptions, Hypothesis};
use transformer_anatomy::masks::{decoder_mask, padding_mask};
use transformer_anatomy::training::checkpoint::check_output_path;
use transformer_anatomy::training::data::{BOS, EOS};
use transformer_anatomy::training::{encode_source, load};
use transformer_anatomy::{display, Pass};

#[derive(clap::Args)]
pub struct Args {
    /// A model written by `anatomy train -o FILE`.
    #[arg(long, value_name = "FILE")]
    checkpoint: PathBuf,
    /// Beam width (1 = greedy decoding).
    #[arg(long, default_value_t = 1)]
    beam: usize,
    /// α of the GNMT length penalty ((5 + len) / 6)^α; 0 ranks by log-probability alone.
    #[arg(long, default_value_t = 0.6)]
    length_penalty: f64,
    /// Recompute every position at every step instead of keeping the keys and values.
    #[arg(long)]
    no_cache: bool,
    /// Print {"input", "output", "tokens", "log_prob", "beams": [...]}.
    #[arg(long)]
    json: bool,
    /// Also write the encoder-decoder attention (output tokens × source tokens) as an HTML picture here.
    #[arg(long, value_name = "FILE")]
    attention: Option<PathBuf>,
    /// The text to translate, e.g. "the twenty-second of november 2026" for the dates task.
    text: String,
}

#[derive(Serialize)]
struct Beam {
    output: String,
    tokens: Vec<String>,
    log_prob: f64,
    score: f64,
    finished: bool,
}

#[derive(Serialize)]
struct Report {
    input: String,
    output: String,
    tokens: Vec<String>,
    log_prob: f64,
    beams: Vec<Beam>,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    if let Some(path) = &args.attention {
        check_output_path(path)?;
    }
    let trained = load(&args.checkpoint, device)?;
    let (task, vocab) = (trained.task, trained.task.vocab());
    let source = encode_source(&trained, &args.text)?;
    let options = BeamOptions {
        width: args.beam,
        length_penalty: args.length_penalty,
        max_new_tokens: trained.config.max_len - 1,
        use_cache: !args.no_cache,
    };
    // Width 1 is greedy decoding: the crate's one greedy decoder writes it.
    let hypotheses = if options.width == 1 {
        let d = greedy(&trained.model, &source, BOS, EOS, options.max_new_tokens, options.use_cache)?.remove(0);
        vec![Hypothesis::new(d.tokens, d.log_prob, d.finished, options.length_penalty)]
    } else {
        beam_search(&trained.model, &source, BOS, EOS, options)?.hypotheses
    };
    let beams: Vec<Beam> = hypotheses
        .iter()
        .map(|h| {
            let tokens = vocab.decode(&h.tokens);
            Beam {
                output: task.detokenize(&tokens),
                tokens,
                log_prob: h.log_prob,
                score: h.score,
                finished: h.finished,
            }
        })
        .collect();
    let best = beams.first().context("the search found no output")?;
    if let Some(path) = &args.attention {
        let ids = &hypotheses[0].tokens;
        let html = cross_attention_picture(&trained, &source, ids, &args.text)?;
        std::fs::write(path, html).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        let report = Report {
            input: args.text.clone(),
            output: best.output.clone(),
            tokens: best.tokens.clone(),
            log_prob: best.log_prob,
            beams,
        };
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    println!("{}", best.output);
    println!("tokens {:?}  log-probability {:.4}", best.tokens, best.log_prob);
    if beams.len() > 1 {
        for (i, b) in beams.iter().enumerate().skip(1) {
            println!("beam {}: {}  (log-probability {:.4}, score {:.4})", i + 1, b.output, b.log_prob, b.score);
        }
    }
    if let Some(path) = &args.attention {
        println!("wrote {}: the encoder-decoder attention, averaged over the heads of the last layer", path.display());
    }
    Ok(())
}

/// The last decoder layer's encoder-decoder attention, averaged over its heads, as a heatmap page: one
/// row per written token (and `</s>`), one column per source token.
fn cross_attention_picture(
    trained: &transformer_anatomy::training::TrainedModel,
    source: &Tensor,
    written: &[i64],
    text: &str,
) -> Result<String> {
    let _no_grad = tch::no_grad_guard();
    let model = &trained.model;
    let vocab = trained.task.vocab();
    let target: Vec<i64> = std::iter::once(BOS).chain(written.iter().copied()).collect();
    let target = Tensor::from_slice(&target).view([1, -1]).to_device(source.device());
    let source_mask = padding_mask(source, model.config.pad_id);
    let memory = model.encode(source, Some(&source_mask), false);
    let target_mask = decoder_mask(&target, model.config.pad_id);
    let out = model.decode(&memory, Some(&source_mask), &target, Some(&target_mask), Pass::WEIGHTS);
    let last = out.cross_attentions.last().context("the decoder has no layers")?;
    let weights = last.get(0).mean_dim(0, false, Kind::Float); // [t, s]
    let rows: Vec<String> = written.iter().map(|&id| vocab.token(id).to_string()).chain(["</s>".to_string()]).collect();
    let source_ids = Vec::<i64>::try_from(&source.get(0))?;
    let columns: Vec<String> = source_ids.iter().map(|&id| vocab.token(id).to_string()).collect();
    let picture = display::cross_attention_heatmap(&weights, &rows, &columns);
    let body = format!(
        "<h2>Encoder-decoder attention</h2><p>Each row is a token the decoder wrote (queries); each column a \
         source token (keys). A cell is the weight, averaged over the last layer's heads.</p>{}",
        picture.0
    );
    Ok(html_page(&format!("encoder-decoder attention: {text}"), &body))
}
