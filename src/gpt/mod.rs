//! # Chapter 11: the decoder branch at work — a small GPT
//!
//! The causal mask is what makes a decoder a decoder: drop the encoder and the encoder-decoder attention,
//! keep masked self-attention and the feed-forward, and the stack can only ever predict the next token
//! from the ones before it — a language model. This module trains one, character by character, on a real
//! book (Moby-Dick, fetched by the set-up), then samples from it with the decoder layer's key/value cache.
//! Every block is built from the earlier chapters' modules; nothing here is new attention code.
//!
//! Chapter section: [`chapters/11-gpt.md`](../chapters/11-gpt.md).
pub mod model;
pub mod sample;
pub mod text;
pub mod train;

pub use model::{GptBlock, GptConfig, GptModel};
pub use sample::{sample, SampleOptions, Sampled};
pub use text::{CharVocab, Corpus};
pub use train::{load_gpt, save_gpt, train_gpt, GptReport, GptStep, GptTrainOptions, TrainedGpt};
