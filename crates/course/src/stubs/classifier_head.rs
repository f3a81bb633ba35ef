//! # Exercise: the classification head
//!
//! To classify a whole sequence, BERT-style models read one vector: the encoder's output at the first
//! position, the `[CLS]` token, which attention has let gather information from every other token. A
//! linear map turns it into one score (logit) per class.
//!
//! * `hidden_states`: `[batch, seq, hidden]`, the encoder's last hidden state;
//! * `classifier`: a linear map `hidden → num_labels`;
//! * return `[batch, num_labels]`. Evaluation mode: no dropout.
//!
//! Chapter: `chapters/07-encoder-and-classifier.md`.
//! Check: `cargo anatomy exercises check classifier_head`; hints: `exercises/hints/classifier_head.md`.
#![allow(unused_variables)] // remove once the body is written
use tch::nn;
use tch::Tensor;

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    todo!("pick the first token, then the linear map")
}
