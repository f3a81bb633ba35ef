//! # Training the encoder-decoder (chapter 10)
//!
//! The second half of the lecture material: where the pairs come from ([`data`]), what is minimized
//! ([`loss`]), how fast the parameters move ([`schedule`]), the loop that puts them together
//! ([`trainer`]) and how a trained model is kept ([`checkpoint`]). Decoding with the trained model is in
//! [`crate::decoding`]; `anatomy translate` runs a checkpoint on a text with the tools' crate.
//!
//! Chapter section: [`chapters/10-training.md`](../chapters/10-training.md).
pub mod checkpoint;
pub mod data;
pub mod fused_adamw;
pub mod loss;
pub mod schedule;
pub mod sweep;
pub mod trainer;

pub use checkpoint::{average, load, save, TrainedModel};
pub use data::{Batch, SentencePair, Task, Vocab};
pub use fused_adamw::FusedAdamW;
pub use loss::{label_smoothed_loss, LossOutput};
pub use schedule::learning_rate;
pub use trainer::{
    encode_source, evaluate, train, train_with_progress, Evaluation, Progress, StepRecord, TrainOptions, TrainReport,
};
