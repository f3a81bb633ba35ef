//! # What `anatomy classify train --out` keeps
//!
//! Either regime leaves a classifier to be used later: on a frozen body, only the head (its linear map
//! and the feature scaling, a few kB), since the body is the pretrained model as it was; fine-tuned, the
//! whole model, since every layer changed. Both files say what they hold (labels, pooling, maximum
//! length, the body's folder and size), and [`load`] tells them apart by that; [`Loaded`] holds one
//! with the body it reads, for `anatomy classify eval` and `predict`.
use std::path::Path;

use anyhow::{ensure, Result};
use tch::nn;

use super::data::{Example, LABELS};
use super::frozen::{metrics, HeadConfig, Metrics, TrainedHead};
use super::{features, fine_tune, Pooling};
use crate::pretrained::BertModel;
use crate::tokenize::Tokenizer;

/// A trained classifier, without its body.
#[derive(Debug)]
pub enum Trained {
    /// A head that reads the frozen body's pooled features.
    Frozen(TrainedHead),
    /// The head of a fine-tuned model, whose body [`load`] wrote into the model it was given.
    FineTuned(nn::Linear),
}

/// Reads a checkpoint of either kind. For a fine-tuned one, `body` (a freshly loaded model of the same
/// folder) receives the fine-tuned weights.
pub fn load(path: &Path, body: &BertModel) -> Result<(Trained, HeadConfig)> {
    let (metadata, found) =
        crate::training::checkpoint::read_safetensors(path, "cargo anatomy classify train --out FILE")?;
    if fine_tune::is_fine_tuned(&metadata) {
        let (classifier, config) = fine_tune::from_file_parts(path, &metadata, found, body)?;
        Ok((Trained::FineTuned(classifier), config))
    } else {
        let (head, config) = TrainedHead::from_file_parts(path, &metadata, found, body.vs.device())?;
        Ok((Trained::Frozen(head), config))
    }
}

/// The name a checkpoint records for its body: the model folder's.
pub fn model_name(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// What a checkpoint says about itself: this chapter's labels, how it pools and cuts, and its body.
pub fn head_config(pooling: Pooling, max_len: usize, model_dir: &Path, model: &BertModel) -> HeadConfig {
    HeadConfig {
        labels: LABELS.iter().map(|l| l.to_string()).collect(),
        pooling,
        max_len,
        model: model_name(model_dir),
        hidden_size: model.config.hidden_size,
    }
}

/// A checkpoint loaded with the body it reads, refusing one made for another model or label set.
pub struct Loaded {
    pub trained: Trained,
    pub config: HeadConfig,
    pub tokenizer: Tokenizer,
    pub body: BertModel,
}

impl Loaded {
    /// Reads `checkpoint` for the body of `model_dir` (`tokenizer` and `body` loaded from it); a checkpoint
    /// of another label set or another body is refused with the way out.
    pub fn open(checkpoint: &Path, model_dir: &Path, tokenizer: Tokenizer, body: BertModel) -> Result<Loaded> {
        let (trained, config) = load(checkpoint, &body)?;
        let labels: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
        ensure!(
            config.labels == labels,
            "{} labels {:?}, not this chapter's {:?}: train it again with `cargo anatomy classify train --out`",
            checkpoint.display(),
            config.labels,
            labels
        );
        ensure!(
            config.model == model_name(model_dir) && config.hidden_size == body.config.hidden_size,
            "{} was trained on the body {} (hidden size {}), not {} (hidden size {}): pass --model with that folder, or train again",
            checkpoint.display(), config.model, config.hidden_size, model_name(model_dir), body.config.hidden_size
        );
        Ok(Loaded { trained, config, tokenizer, body })
    }

    /// The label probabilities `[n, 2]` of `texts`.
    pub fn probabilities(&self, texts: &[String], batch: usize) -> Result<tch::Tensor> {
        let Loaded { config, tokenizer, body, .. } = self;
        match &self.trained {
            Trained::Frozen(head) => {
                let features = features::extract(body, tokenizer, texts, config.max_len, batch, &mut |_, _| {})?;
                Ok(tch::no_grad(|| head.logits(features.get(config.pooling)).softmax(-1, tch::Kind::Float)))
            }
            Trained::FineTuned(classifier) => {
                fine_tune::probabilities(body, classifier, tokenizer, texts, config.pooling, config.max_len, batch)
            }
        }
    }

    /// "frozen" for a head on the frozen body, "fine-tune" for a fine-tuned model.
    pub fn regime(&self) -> &'static str {
        match self.trained {
            Trained::Frozen(_) => "frozen",
            Trained::FineTuned(_) => "fine-tune",
        }
    }

    /// Accuracy, precision, recall, F1 and the rest on `examples`, read `batch` at a time.
    pub fn evaluate(&self, examples: &[&Example], batch: usize) -> Result<Metrics> {
        let texts: Vec<String> = examples.iter().map(|e| e.text()).collect();
        let predicted = Vec::<i64>::try_from(&self.probabilities(&texts, batch)?.argmax(-1, false))?;
        Ok(metrics(&predicted.iter().map(|&l| l as usize).collect::<Vec<_>>(), examples))
    }

    /// The tokens of `text` that moved the decision towards `label` most, strongest first
    /// ([`super::tokens_that_mattered`] with this checkpoint's pooling, length and head).
    pub fn tokens_that_mattered(&self, text: &str, label: usize) -> Result<super::Shares> {
        let Loaded { config, tokenizer, body, .. } = self;
        super::tokens_that_mattered(body, tokenizer, text, config.max_len, config.pooling, &self.direction(), label)
    }

    /// The part of spam's logit minus ham's that no token owns ([`super::frozen::TrainedHead::constant`];
    /// a fine-tuned head reads its features as they are, so only its bias difference). With mean pooling,
    /// a text's token shares (its words' and `[CLS]`'s and `[SEP]`'s) plus this give the logit difference.
    pub fn constant(&self) -> f64 {
        match &self.trained {
            Trained::Frozen(head) => head.constant(),
            Trained::FineTuned(classifier) => {
                classifier.bs.as_ref().map(|b| (b.get(1) - b.get(0)).double_value(&[])).unwrap_or(0.0)
            }
        }
    }

    /// This checkpoint's test figures on `examples`, with how it was trained, as `anatomy classify eval`
    /// prints them.
    pub fn evaluation(&self, examples: &[&Example], batch: usize) -> Result<CheckpointFigures> {
        Ok(CheckpointFigures {
            regime: self.regime(),
            test: self.evaluate(examples, batch)?,
            pooling: self.config.pooling,
            max_len: self.config.max_len,
        })
    }

    /// The label of each text, how sure the head is, and the (at most five) tokens that moved it there most,
    /// as `anatomy classify predict` prints them. With mean pooling the split of the logit difference is
    /// exact, and what no word owns is given too: `[CLS]` and `[SEP]`'s share, and the head's constant.
    pub fn predict(&self, texts: &[String]) -> Result<Vec<Prediction>> {
        let probabilities = self.probabilities(texts, 32)?;
        let mut predictions = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            let p = Vec::<f32>::try_from(&probabilities.get(i as i64).to_device(tch::Device::Cpu))?;
            let label = if p[1] > p[0] { 1 } else { 0 };
            let shares = self.tokens_that_mattered(text, label)?;
            // With mean pooling: the rest of the logit difference (towards the label), which no word owns.
            let sign = if label == 1 { 1.0 } else { -1.0 };
            let mean = self.config.pooling == Pooling::Mean;
            let tokens = shares.tokens.iter().take(5).map(|(t, w)| TokenShare { token: t.clone(), weight: *w });
            predictions.push(Prediction {
                label: self.config.labels[label].clone(),
                probability: p[label],
                tokens: tokens.collect(),
                special_tokens: mean.then_some(shares.special),
                bias_and_centring: mean.then(|| sign * self.constant()),
                pooling: self.config.pooling,
            });
        }
        Ok(predictions)
    }

    /// What the head multiplies a pooled vector by to get spam's logit minus ham's: `[hidden]`.
    pub fn direction(&self) -> tch::Tensor {
        match &self.trained {
            Trained::Frozen(head) => head.direction(), // it reads (x - shift) / scale
            Trained::FineTuned(classifier) => classifier.ws.get(1) - classifier.ws.get(0),
        }
    }
}

/// A checkpoint's figures on the test part, and how it was trained.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckpointFigures {
    pub regime: &'static str,
    pub test: Metrics,
    pub pooling: Pooling,
    pub max_len: usize,
}

impl CheckpointFigures {
    /// The line `anatomy classify eval` prints.
    pub fn words(&self) -> String {
        format!("test ({}): {}", self.regime, self.test.words())
    }
}

/// One token's share of a decision.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TokenShare {
    pub token: String,
    pub weight: f64,
}

/// The head's label for one text ([`Loaded::predict`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Prediction {
    pub label: String,
    pub probability: f32,
    /// The tokens that moved the decision towards the label most, strongest first (at most five).
    pub tokens: Vec<TokenShare>,
    /// With mean pooling: `[CLS]` and `[SEP]`'s share, and the head's bias and centring, which no word owns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub special_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bias_and_centring: Option<f64>,
    #[serde(skip)]
    pub pooling: Pooling,
}

impl Prediction {
    /// The lines `anatomy classify predict` prints for `text`.
    pub fn words(&self, text: &str) -> String {
        let shown: String = text.chars().take(60).collect();
        let listed: Vec<String> = self.tokens.iter().map(|s| format!("{} {:+.3}", s.token, s.weight)).collect();
        let why = match self.pooling {
            Pooling::Mean => "share of the decision",
            Pooling::Cls => "[CLS]'s attention, last layer",
        };
        let mut lines = format!(
            "{} ({:.3})  {}\n  tokens that mattered most ({why}): {}",
            self.label,
            self.probability,
            shown.replace('\n', " "),
            listed.join(", ")
        );
        if let (Some(special), Some(constant)) = (self.special_tokens, self.bias_and_centring) {
            lines += &format!("\n  not a word's: [CLS] and [SEP] {special:+.3}, bias and centring {constant:+.3}");
        }
        lines
    }
}
