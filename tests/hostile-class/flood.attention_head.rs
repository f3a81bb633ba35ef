//! expect: printed more than 1024 KiB
//! Prints without end.
use tch::Tensor;
use transformer_anatomy::exercises::support::Projections;

pub fn attention_head(hidden_state: &Tensor, projections: &Projections) -> Tensor {
    loop {
        println!("all work and no play makes a dull grader; all work and no play makes a dull grader");
    }
}
