//! # PyTorch's default initialisation
//!
//! The book builds its modules from `nn.Linear` and `nn.Embedding`, which start from PyTorch's defaults:
//! a linear map's weights and biases are drawn uniformly from `±1/√fan_in`, an embedding table from the
//! standard normal N(0, 1). `tch`'s own default for a linear weight is Kaiming-uniform with the ReLU
//! gain, `±√6/√fan_in`, about 2.45 times wider, which would inflate every random-weight number the
//! chapters print. Every linear map of the chapter's modules is made with [`linear`], so the random
//! values have the book's scale. (The encoder-decoder model re-draws its matrices Xavier-uniform, as the
//! paper's reference code does.)
use tch::nn::{self, Init};

/// `nn.Linear(in_dim, out_dim)` as PyTorch initialises it: weight `[out_dim, in_dim]` and bias `[out_dim]`,
/// both uniform in `±1/√in_dim`.
///
/// ```
/// use tch::{nn, Device};
/// use transformer_anatomy::init::linear;
///
/// let vs = nn::VarStore::new(Device::Cpu);
/// let layer = linear(vs.root() / "dense", 64, 8);
/// let bound = 1.0 / 64f64.sqrt();
/// assert!(layer.ws.abs().max().double_value(&[]) <= bound);
/// ```
pub fn linear<'a, P: std::borrow::Borrow<nn::Path<'a>>>(p: P, in_dim: i64, out_dim: i64) -> nn::Linear {
    let bound = 1.0 / (in_dim as f64).sqrt();
    let uniform = Init::Uniform { lo: -bound, up: bound };
    nn::linear(p, in_dim, out_dim, nn::LinearConfig { ws_init: uniform, bs_init: Some(uniform), bias: true })
}

/// `nn.Embedding(rows, dim)` as PyTorch initialises it: every entry from N(0, 1).
pub fn embedding<'a, P: std::borrow::Borrow<nn::Path<'a>>>(p: P, rows: i64, dim: i64) -> nn::Embedding {
    let config = nn::EmbeddingConfig { ws_init: Init::Randn { mean: 0.0, stdev: 1.0 }, ..Default::default() };
    nn::embedding(p, rows, dim, config)
}
