//! # Checkpoints: save, load, and average
//!
//! A trained model is its parameters plus what is needed to rebuild it: the task (and so the vocabulary)
//! and the sizes. Both go into one safetensors file — the tensors under their parameter names, the task
//! and the [`Seq2SeqConfig`] as JSON in the file's metadata — so `anatomy translate --checkpoint FILE`
//! needs nothing else. A file is written to a temporary name and renamed when complete, so a failed
//! run never leaves half a checkpoint. [`average`] implements one of the paper's tricks: the mean of the
//! last few checkpoints usually generalizes a little better than the last one alone.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
use std::collections::HashMap;
use std::path::Path;

use anyhow::{anyhow, bail, ensure, Context, Result};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use tch::{nn, Device, Kind, Tensor};

use super::data::Task;
use crate::encoder_decoder::EncoderDecoder;
use crate::encoder_decoder::Seq2SeqConfig;

/// What the file's metadata says it is.
const FORMAT: &str = "transformer-anatomy/seq2seq-v1";

/// A trained encoder-decoder with its task: everything `translate` needs.
#[derive(Debug)]
pub struct TrainedModel {
    pub task: Task,
    pub config: Seq2SeqConfig,
    pub model: EncoderDecoder,
    /// Owns the parameters.
    pub vs: nn::VarStore,
}

impl TrainedModel {
    /// A model with fresh (Xavier) weights for `task` and `config`.
    pub fn new(task: Task, config: &Seq2SeqConfig, device: Device) -> Result<Self> {
        let vs = nn::VarStore::new(device);
        let model = EncoderDecoder::new(&vs, config)?;
        Ok(TrainedModel { task, config: config.clone(), model, vs })
    }

    /// The parameters in name order (a stable order for saving and averaging).
    pub fn named_parameters(&self) -> Vec<(String, Tensor)> {
        crate::init::sorted_variables(&self.vs)
    }
}

/// Writes the model to `path` (a `.safetensors` file). The folder must exist; the file appears only
/// once it is complete.
pub fn save(trained: &TrainedModel, path: &Path) -> Result<()> {
    let metadata = HashMap::from([
        ("format".to_string(), FORMAT.to_string()),
        ("task".to_string(), trained.task.name().to_string()),
        ("config".to_string(), serde_json::to_string(&trained.config)?),
    ]);
    write_safetensors(trained.named_parameters(), metadata, path)
}

/// Writes named tensors as float32 with `metadata` to `path`, through a `.partial` file renamed into place
/// once complete: the one way both checkpoint kinds (this one and chapter 11's) are written.
pub(crate) fn write_safetensors(
    named: Vec<(String, Tensor)>,
    metadata: HashMap<String, String>,
    path: &Path,
) -> Result<()> {
    check_output_path(path)?;
    let tensors: Vec<(String, Vec<u8>, Vec<usize>)> = named
        .into_iter()
        .map(|(name, t)| {
            let t = t.detach().to_device(Device::Cpu).to_kind(Kind::Float).contiguous();
            let shape = t.size().iter().map(|&d| d as usize).collect();
            let values = Vec::<f32>::try_from(&t.flatten(0, -1)).context("reading a parameter")?;
            Ok((name, values.iter().flat_map(|v| v.to_le_bytes()).collect(), shape))
        })
        .collect::<Result<_>>()?;
    let views = tensors
        .iter()
        .map(|(name, bytes, shape)| Ok((name.as_str(), TensorView::new(Dtype::F32, shape.clone(), bytes)?)))
        .collect::<Result<Vec<_>>>()?;
    let partial = path.with_extension("safetensors.partial");
    let written = safetensors::tensor::serialize_to_file(views, &Some(metadata), &partial)
        .map_err(|e| anyhow!("{e:?}"))
        .and_then(|()| std::fs::rename(&partial, path).map_err(Into::into));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

/// Fails before any work is done when `path` could not be written: its folder does not exist, or it is
/// a folder itself.
pub fn check_output_path(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    ensure!(parent.is_dir(), "cannot write {}: the folder {} does not exist", path.display(), parent.display());
    ensure!(
        !path.is_dir(),
        "cannot write {}: it is a folder; give a file name such as model.safetensors",
        path.display()
    );
    Ok(())
}

/// Reads a model written by [`save`]. A missing, truncated or foreign file, or one whose tensors do not
/// fit its configuration, is an error that names the problem (and the tensor, with both shapes).
pub fn load(path: &Path, device: Device) -> Result<TrainedModel> {
    let (metadata, found) = read_safetensors(path, "cargo anatomy train -o FILE")?;
    if metadata.get("format").map(String::as_str) != Some(FORMAT) {
        bail!(
            "{} is not a checkpoint written by `cargo anatomy train` (no {FORMAT:?} in its metadata)",
            path.display()
        );
    }
    let task = Task::from_name(metadata.get("task").map_or("", String::as_str))?;
    let config: Seq2SeqConfig = serde_json::from_str(metadata.get("config").map_or("", String::as_str))
        .with_context(|| format!("{}: the configuration in the metadata does not parse", path.display()))?;
    let trained = TrainedModel::new(task, &config, device)?;
    copy_into(&trained, found).with_context(|| format!("loading {}", path.display()))?;
    Ok(trained)
}

/// Reads a safetensors file's metadata and float32 tensors; `how_to_make` names the command that writes
/// one, for the error when the file is missing.
pub(crate) fn read_safetensors(
    path: &Path,
    how_to_make: &str,
) -> Result<(HashMap<String, String>, HashMap<String, Tensor>)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the checkpoint {}: make one with `{how_to_make}`", path.display()))?;
    let unreadable = |e: safetensors::SafeTensorError| {
        anyhow!("{} is not a readable checkpoint ({e:?}): it may be truncated; train it again", path.display())
    };
    let (_, header) = SafeTensors::read_metadata(&bytes).map_err(unreadable)?;
    let file = SafeTensors::deserialize(&bytes).map_err(unreadable)?;
    let metadata = header.metadata().clone().unwrap_or_default();
    let mut found: HashMap<String, Tensor> = HashMap::new();
    for (name, view) in file.tensors() {
        ensure!(view.dtype() == Dtype::F32, "{}: tensor {name} is not float32", path.display());
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        found.insert(name, Tensor::from_data_size(view.data(), &shape, Kind::Float));
    }
    Ok((metadata, found))
}

/// Copies named tensors into the model's parameters, checking that every parameter is there with its shape.
pub fn copy_into(trained: &TrainedModel, tensors: HashMap<String, Tensor>) -> Result<()> {
    copy_named(trained.named_parameters(), tensors)
}

/// Copies `tensors` into the variables `named` (name and variable), every one present with its shape.
pub(crate) fn copy_named(named: Vec<(String, Tensor)>, mut tensors: HashMap<String, Tensor>) -> Result<()> {
    tch::no_grad(|| {
        for (name, mut var) in named {
            let source = tensors.remove(&name).ok_or_else(|| anyhow!("the file has no tensor {name}"))?;
            ensure!(
                source.size() == var.size(),
                "{name} has shape {:?} in the file but {:?} in a model of these sizes: the checkpoint belongs to another model",
                source.size(),
                var.size()
            );
            var.f_copy_(&source)?;
        }
        Ok(())
    })
}

/// The element-wise mean of several snapshots of the same parameters (each a list in the same order),
/// computed in double precision so that averaging copies of one snapshot gives that snapshot back exactly.
pub fn average(snapshots: &[Vec<Tensor>]) -> Result<Vec<Tensor>> {
    let first = snapshots.first().ok_or_else(|| anyhow!("there are no checkpoints to average"))?;
    let _no_grad = tch::no_grad_guard();
    Ok((0..first.len())
        .map(|i| {
            let stacked = Tensor::stack(&snapshots.iter().map(|s| &s[i]).collect::<Vec<_>>(), 0);
            stacked.mean_dim(0, false, Kind::Double).to_kind(first[i].kind())
        })
        .collect())
}
