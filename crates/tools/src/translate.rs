//! Running a trained checkpoint on a text (`anatomy translate`): the source encoded with the task's
//! vocabulary, then greedy decoding (width 1) or beam search, each hypothesis turned back into the task's
//! text; and, as a picture, where the last decoder layer looked in the source while it wrote.
use anyhow::{Context, Result};
use maud::html;
use serde::Serialize;
use tch::{Kind, Tensor};

use transformer_anatomy::decoding::{beam_search, greedy, BeamOptions, Hypothesis};
use transformer_anatomy::masks::{decoder_mask, padding_mask};
use transformer_anatomy::training::data::{BOS, EOS};
use transformer_anatomy::training::{encode_source, TrainedModel};
use transformer_anatomy::{attention_view::html_page, display, Pass};

#[derive(Serialize)]
/// One hypothesis, as text.
pub struct Beam {
    pub output: String,
    pub tokens: Vec<String>,
    pub log_prob: f64,
    pub score: f64,
    pub finished: bool,
}

#[derive(Serialize)]
/// What the search wrote for `input`: the best hypothesis, then every beam, best first.
pub struct Translation {
    pub input: String,
    pub output: String,
    pub tokens: Vec<String>,
    pub log_prob: f64,
    pub beams: Vec<Beam>,
    /// The best hypothesis's token ids (for the picture).
    #[serde(skip)]
    pub ids: Vec<i64>,
}

/// Translates `text` with `trained`: width 1 is the crate's one greedy decoder, wider is beam search.
pub fn translate(trained: &TrainedModel, text: &str, options: BeamOptions) -> Result<Translation> {
    let (task, vocab) = (trained.task, trained.task.vocab());
    let source = encode_source(trained, text)?;
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
    Ok(Translation {
        input: text.to_string(),
        output: best.output.clone(),
        tokens: best.tokens.clone(),
        log_prob: best.log_prob,
        ids: hypotheses[0].tokens.clone(),
        beams,
    })
}

/// The last decoder layer's encoder-decoder attention, averaged over its heads, as a heatmap page: one
/// row per written token (and `</s>`), one column per source token.
pub fn cross_attention_page(trained: &TrainedModel, text: &str, written: &[i64]) -> Result<String> {
    let source = &encode_source(trained, text)?;
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
    let body = html! {
        h2 { "Encoder-decoder attention" }
        p {
            "Each row is a token the decoder wrote (queries); each column a source token (keys). A cell is the \
             weight, averaged over the last layer's heads."
        }
        (picture)
    };
    Ok(html_page(&format!("encoder-decoder attention: {text}"), &body.0))
}
