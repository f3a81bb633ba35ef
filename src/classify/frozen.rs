//! # The head on a frozen body
//!
//! The first of the two ways to use a pretrained body: leave its weights alone, compute each message's
//! pooled vector once ([`super::features`]), and train only the chapter's head — dropout and one linear
//! map to two logits — on those vectors. Each feature is first scaled to mean 0 and spread 1 over the
//! training set, so that one learning rate suits every dimension; training takes seconds. What the head
//! can reach is bounded by what the pooled vector already says about spam.
use anyhow::{ensure, Result};
use serde::Serialize;
use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Tensor};

use super::data::Example;

/// How a classifier did on a set of examples (spam is the positive class).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    pub accuracy: f64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Accuracy on the hard-ham group alone (ham that looks like spam).
    pub hard_ham_accuracy: f64,
    /// `confusion[true][predicted]`, 0 ham and 1 spam.
    pub confusion: [[usize; 2]; 2],
}

impl Metrics {
    /// `accuracy 0.981, precision 0.960, recall 0.948, F1 (spam) 0.954; hard ham 0.920`, as the commands print it.
    pub fn words(&self) -> String {
        format!(
            "accuracy {:.3}, precision {:.3}, recall {:.3}, F1 (spam) {:.3}; hard ham {:.3}",
            self.accuracy, self.precision, self.recall, self.f1, self.hard_ham_accuracy
        )
    }
}

/// The metrics of `predicted` labels for `examples`.
pub fn metrics(predicted: &[usize], examples: &[&Example]) -> Metrics {
    let mut confusion = [[0usize; 2]; 2];
    let (mut hard, mut hard_right) = (0usize, 0usize);
    for (&p, e) in predicted.iter().zip(examples) {
        confusion[e.label][p] += 1;
        if e.group == "hard-ham-1" {
            hard += 1;
            hard_right += usize::from(p == e.label);
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let tp = confusion[1][1];
    let precision = ratio(tp, confusion[0][1] + tp);
    let recall = ratio(tp, confusion[1][0] + tp);
    let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
    Metrics {
        accuracy: ratio(confusion[0][0] + tp, predicted.len()),
        precision,
        recall,
        f1,
        hard_ham_accuracy: ratio(hard_right, hard),
        confusion,
    }
}

/// How the head is trained.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeadOptions {
    pub epochs: usize,
    pub lr: f64,
    pub weight_decay: f64,
    pub batch: usize,
    pub dropout: f64,
    pub seed: i64,
}

impl Default for HeadOptions {
    fn default() -> Self {
        HeadOptions { epochs: 40, lr: 1e-3, weight_decay: 0.01, batch: 32, dropout: 0.1, seed: 0 }
    }
}

/// One epoch's losses, for the curves.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EpochLoss {
    pub epoch: usize,
    pub train_loss: f64,
    pub validation_loss: f64,
}

/// A trained head: the scaling learnt from the training features, and the linear map.
#[derive(Debug)]
pub struct TrainedHead {
    pub vs: nn::VarStore,
    pub classifier: nn::Linear,
    /// `[hidden]` each: the training features' mean and spread.
    pub shift: Tensor,
    pub scale: Tensor,
    pub curve: Vec<EpochLoss>,
}

impl TrainedHead {
    /// `[n, hidden]` pooled vectors → `[n, 2]` logits (evaluation: no dropout).
    pub fn logits(&self, features: &Tensor) -> Tensor {
        self.classifier.forward(&((features - &self.shift) / &self.scale))
    }

    /// What the head multiplies a pooled vector by to get spam's logit minus ham's: `[hidden]` (the
    /// weights' row difference, divided by the scaling it reads its features with).
    pub fn direction(&self) -> Tensor {
        (self.classifier.ws.get(1) - self.classifier.ws.get(0)) / &self.scale
    }

    /// The part of spam's logit minus ham's that no feature owns: the bias difference minus
    /// `shift · direction` (the head centres each feature on the training set's mean), in double precision.
    pub fn constant(&self) -> f64 {
        let bias = self.classifier.bs.as_ref().map(|b| (b.get(1) - b.get(0)).double_value(&[])).unwrap_or(0.0);
        let centring = self.shift.to_kind(Kind::Double).dot(&self.direction().to_kind(Kind::Double));
        bias - centring.double_value(&[])
    }

    /// The most probable label of each row.
    pub fn predict(&self, features: &Tensor) -> Vec<usize> {
        let _no_grad = tch::no_grad_guard();
        let labels = self.logits(features).argmax(-1, false);
        Vec::<i64>::try_from(&labels.to_device(Device::Cpu)).expect("labels").into_iter().map(|l| l as usize).collect()
    }

    fn loss(&self, features: &Tensor, labels: &Tensor) -> f64 {
        let _no_grad = tch::no_grad_guard();
        self.logits(features).cross_entropy_for_logits(labels).double_value(&[])
    }
}

/// Trains the head on `train` features and labels, reporting the validation loss after each epoch.
pub fn train_head(
    train: (&Tensor, &[usize]),
    validation: (&Tensor, &[usize]),
    options: HeadOptions,
) -> Result<TrainedHead> {
    let (x, labels) = train;
    ensure!(x.size()[0] as usize == labels.len() && !labels.is_empty(), "one label per training row");
    ensure!(options.batch > 0, "--batch must be at least 1");
    let device = x.device();
    tch::manual_seed(options.seed);
    let y = Tensor::from_slice(&labels.iter().map(|&l| l as i64).collect::<Vec<_>>()).to_device(device);
    let vy = Tensor::from_slice(&validation.1.iter().map(|&l| l as i64).collect::<Vec<_>>()).to_device(device);
    let shift = x.mean_dim(0, false, Kind::Float); // [hidden]
    let scale = x.std_dim(0, false, false).clamp_min(1e-6); // [hidden]
    let hidden = x.size()[1];
    let vs = nn::VarStore::new(device);
    let classifier = crate::init::linear(vs.root() / "classifier", hidden, 2);
    let mut head = TrainedHead { vs, classifier, shift, scale, curve: Vec::new() };
    let mut optimizer = nn::AdamW { wd: options.weight_decay, ..Default::default() }.build(&head.vs, options.lr)?;
    let n = labels.len() as i64;
    let scaled = (x - &head.shift) / &head.scale; // [n, hidden]
    for epoch in 1..=options.epochs {
        // The order is drawn on the CPU's generator (one seed, one order on every device).
        let order = Tensor::randperm(n, (Kind::Int64, tch::Device::Cpu)).to_device(device);
        let (mut total, mut seen) = (0.0, 0i64);
        for start in (0..n).step_by(options.batch) {
            let rows = order.narrow(0, start, (options.batch as i64).min(n - start));
            let inputs = scaled.index_select(0, &rows).dropout(options.dropout, true);
            let loss = head.classifier.forward(&inputs).cross_entropy_for_logits(&y.index_select(0, &rows));
            optimizer.backward_step(&loss);
            total += loss.double_value(&[]) * rows.size()[0] as f64;
            seen += rows.size()[0];
        }
        let validation_loss = head.loss(validation.0, &vy);
        head.curve.push(EpochLoss { epoch, train_loss: total / seen as f64, validation_loss });
    }
    Ok(head)
}

/// What a head checkpoint says about itself, besides its tensors.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HeadConfig {
    pub labels: Vec<String>,
    pub pooling: super::Pooling,
    pub max_len: usize,
    /// The body it reads: the model folder's name and its hidden size.
    pub model: String,
    pub hidden_size: i64,
}

const FORMAT: &str = "anatomy-classify-head";

impl TrainedHead {
    /// Writes the head (the linear map and the feature scaling) with its configuration, whole.
    pub fn save(&self, path: &std::path::Path, config: &HeadConfig) -> Result<()> {
        let mut named: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        named.push(("shift".into(), self.shift.shallow_clone()));
        named.push(("scale".into(), self.scale.shallow_clone()));
        let metadata = std::collections::HashMap::from([
            ("format".to_string(), FORMAT.to_string()),
            ("config".to_string(), serde_json::to_string(config)?),
        ]);
        crate::training::checkpoint::write_safetensors(named, metadata, path)
    }

    /// Reads a head written by [`TrainedHead::save`], with its configuration.
    pub fn load(path: &std::path::Path, device: Device) -> Result<(TrainedHead, HeadConfig)> {
        let (metadata, found) =
            crate::training::checkpoint::read_safetensors(path, "cargo anatomy classify train --out FILE")?;
        Self::from_file_parts(path, &metadata, found, device)
    }

    /// The head from a checkpoint's metadata and tensors, already read from `path`.
    pub(crate) fn from_file_parts(
        path: &std::path::Path,
        metadata: &std::collections::HashMap<String, String>,
        mut found: std::collections::HashMap<String, Tensor>,
        device: Device,
    ) -> Result<(TrainedHead, HeadConfig)> {
        ensure!(
            metadata.get("format").map(String::as_str) == Some(FORMAT),
            "{} is not a head written by `cargo anatomy classify train --out` (no {FORMAT:?} in its metadata)",
            path.display()
        );
        let config: HeadConfig = serde_json::from_str(metadata.get("config").map_or("", String::as_str))
            .map_err(|e| anyhow::anyhow!("{}: its configuration does not parse ({e})", path.display()))?;
        let mut take =
            |name: &str| found.remove(name).ok_or_else(|| anyhow::anyhow!("{}: no tensor {name}", path.display()));
        let (weight, bias, shift, scale) =
            (take("classifier.weight")?, take("classifier.bias")?, take("shift")?, take("scale")?);
        let n = config.labels.len() as i64;
        ensure!(
            weight.size() == [n, config.hidden_size] && shift.size() == [config.hidden_size],
            "{}: its tensors do not fit its configuration ({} labels, hidden size {})",
            path.display(),
            n,
            config.hidden_size
        );
        let vs = nn::VarStore::new(device);
        let mut classifier = crate::init::linear(vs.root() / "classifier", config.hidden_size, n);
        tch::no_grad(|| {
            classifier.ws.copy_(&weight);
            if let Some(b) = classifier.bs.as_mut() {
                b.copy_(&bias);
            }
        });
        let head = TrainedHead {
            vs,
            classifier,
            shift: shift.to_device(device),
            scale: scale.to_device(device),
            curve: Vec::new(),
        };
        Ok((head, config))
    }
}
