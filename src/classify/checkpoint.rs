//! # What `anatomy classify train --out` keeps
//!
//! Either regime leaves a classifier to be used later: on a frozen body, only the head (its linear map
//! and the feature scaling, a few kB), since the body is the pretrained model as it was; fine-tuned, the
//! whole model, since every layer changed. Both files say what they hold (labels, pooling, maximum
//! length, the body's folder and size), and [`load`] tells them apart by that.
use std::path::Path;

use anyhow::Result;
use tch::nn;

use super::fine_tune;
use super::frozen::{HeadConfig, TrainedHead};
use crate::pretrained::BertModel;

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
    let (metadata, found) = crate::training::checkpoint::read_safetensors(path, "anatomy classify train --out FILE")?;
    if fine_tune::is_fine_tuned(&metadata) {
        let (classifier, config) = fine_tune::from_file_parts(path, &metadata, found, body)?;
        Ok((Trained::FineTuned(classifier), config))
    } else {
        let (head, config) = TrainedHead::from_file_parts(path, &metadata, found, body.vs.device())?;
        Ok((Trained::Frozen(head), config))
    }
}
