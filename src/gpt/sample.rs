//! Writing text: the model scores every character that could come next, and one is drawn — the most
//! probable (greedy, temperature 0 or top-k 1), or at random from the scores divided by a temperature,
//! kept to the k best (top-k) or to the smallest set holding probability p (top-p). The key/value cache
//! lets each step feed only the newest character.
//!
//! The model's positions are learned up to its context, so a window that is full cannot slide by one
//! without recomputing everything. When the window is full, both paths keep its last half and go on from
//! there; the cached path refills its cache from that half. So the same seed gives the same text with and
//! without the cache.
use anyhow::{ensure, Result};
use serde::Serialize;
use tch::{Kind, Tensor};

use super::train::TrainedGpt;
use crate::attention::Pass;
use crate::inference_mode::inference_mode_guard;

/// How to sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleOptions {
    pub max_new_tokens: usize,
    /// 0 = greedy; 1 = the model's own distribution; above 1 flatter, below 1 sharper.
    pub temperature: f64,
    pub top_k: Option<i64>,
    pub top_p: Option<f64>,
    pub seed: i64,
    pub use_cache: bool,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions { max_new_tokens: 256, temperature: 0.8, top_k: None, top_p: None, seed: 1337, use_cache: true }
    }
}

/// What [`sample`] wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sampled {
    pub prompt: String,
    /// The new characters (the prompt not included).
    pub text: String,
    /// The model's own log-probability (temperature 1, no filtering) of `text` after the prompt, in nats.
    pub log_prob: f64,
}

impl Sampled {
    /// The prompt and its continuation as a reader wants them: the book's own line breaks kept, lines
    /// longer than `width` broken between words, and every line indented by `indent` spaces (a notebook
    /// would otherwise break a long line anywhere, mid-word).
    pub fn wrapped(&self, width: usize, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let options = textwrap::Options::new(width.max(indent + 8)).initial_indent(&pad).subsequent_indent(&pad);
        textwrap::fill(&format!("{}{}", self.prompt, self.text), options)
    }
}

/// Continues `prompt` by `options.max_new_tokens` characters.
pub fn sample(trained: &TrainedGpt, prompt: &str, options: &SampleOptions) -> Result<Sampled> {
    ensure!(!prompt.is_empty(), "the prompt is empty: give at least one character");
    ensure!(
        options.temperature >= 0.0 && options.temperature.is_finite(),
        "--temperature must be 0 or more, got {}",
        options.temperature
    );
    ensure!(options.top_k.is_none_or(|k| k >= 1), "--top-k must be at least 1");
    ensure!(options.top_p.is_none_or(|p| p > 0.0 && p <= 1.0), "--top-p must be in (0, 1]");
    let model = &trained.model;
    let context = model.config.context;
    let device = trained.vs.device();
    let mut ids = trained.vocab.encode(prompt)?;
    let _inference = inference_mode_guard(); // the text is only read: no autograd bookkeeping at all
    tch::manual_seed(options.seed);
    let greedy = options.temperature == 0.0 || options.top_k == Some(1);
    let mut window_start = ids.len().saturating_sub(context as usize); // a long prompt keeps its last part
    let mut cache = options.use_cache.then(|| model.new_cache());
    let mut fed = window_start; // how many ids the cache holds, counted from the start of `ids`
    let mut log_prob = 0.0;
    let mut written = Vec::with_capacity(options.max_new_tokens);
    for _ in 0..options.max_new_tokens {
        if ids.len() - window_start == context as usize {
            window_start = ids.len() - context as usize / 2; // full: keep the last half, start again
            cache = options.use_cache.then(|| model.new_cache());
            fed = window_start;
        }
        let logits = match cache.as_deref_mut() {
            Some(cache) => {
                let new = Tensor::from_slice(&ids[fed..]).view([1, -1]).to_device(device);
                let out = model.forward(&new, (fed - window_start) as i64, Pass::EVAL, Some(cache))?;
                fed = ids.len();
                out.logits
            }
            None => {
                let window = Tensor::from_slice(&ids[window_start..]).view([1, -1]).to_device(device);
                model.forward(&window, 0, Pass::EVAL, None)?.logits
            }
        };
        let last = logits.get(0).get(-1).to_kind(Kind::Float); // [vocab]
        let next = if greedy { last.argmax(0, false).int64_value(&[]) } else { draw(&last, options) };
        log_prob += last.log_softmax(0, Kind::Float).double_value(&[next]);
        ids.push(next);
        written.push(next);
    }
    Ok(Sampled { prompt: prompt.to_string(), text: trained.vocab.decode(&written), log_prob })
}

/// One character drawn from `logits` `[vocab]` after the temperature, top-k and top-p filters.
fn draw(logits: &Tensor, options: &SampleOptions) -> i64 {
    let mut scores = logits / options.temperature;
    let vocab = scores.size()[0];
    if let Some(k) = options.top_k.filter(|&k| k < vocab) {
        let kth = scores.topk(k, 0, true, true).0.get(k - 1);
        scores = scores.masked_fill(&scores.lt_tensor(&kth), f64::NEG_INFINITY);
    }
    if let Some(p) = options.top_p.filter(|&p| p < 1.0) {
        let (sorted, order) = scores.sort(0, true);
        let cumulative = sorted.softmax(0, Kind::Float).cumsum(0, Kind::Float);
        // Drop a character when the ones before it already hold p (the first always stays).
        let before = &cumulative - sorted.softmax(0, Kind::Float);
        let drop_sorted = before.ge(p);
        let drop = drop_sorted.scatter(0, &order, &drop_sorted);
        scores = scores.masked_fill(&drop, f64::NEG_INFINITY);
    }
    // Drawn on the CPU's generator, whatever the model's device: one seed writes the same text on a GPU as
    // here (the character is read on the CPU right after anyway, and the scores are one row).
    scores.softmax(0, Kind::Float).to_device(tch::Device::Cpu).multinomial(1, false).int64_value(&[0])
}
