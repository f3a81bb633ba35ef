//! # PyTorch's default initialisation
//!
//! The book builds its modules from `nn.Linear` and `nn.Embedding`, which start from PyTorch's defaults:
//! a linear map's weights and biases are drawn uniformly from `±1/√fan_in`, an embedding table from the
//! standard normal N(0, 1). `tch`'s own default for a linear weight is Kaiming-uniform with the ReLU
//! gain, `±√6/√fan_in`, about 2.45 times wider, which would inflate every random-weight number the
//! chapters print. Every linear map of the chapter's modules is made with [`linear`], so the random
//! values have the book's scale. (The encoder-decoder model re-draws its matrices Xavier-uniform,
//! embedding tables included, as the lecture notes' `make_model` and the Annotated Transformer it adapts
//! do; see [`xavier_uniform`].)
//!
//! Every random start is drawn on the CPU's generator and then copied to the model's device. A GPU has a
//! generator of its own, which gives other numbers for the same seed: drawn there, the weights of a model
//! on CUDA would differ from the ones the chapters, notebooks and book print. Drawn here, one seed gives
//! the same weights on every device ([`randn`] does the same for a random input).
use tch::nn::{self, Init};
use tch::{Device, Kind, Tensor};

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
    let zeros = nn::LinearConfig { ws_init: Init::Const(0.0), bs_init: Some(Init::Const(0.0)), bias: true };
    let mut layer = nn::linear(p, in_dim, out_dim, zeros);
    fill_linear(&mut layer, in_dim);
    layer
}

/// Draws a linear map's weight, then its bias, uniformly from `±1/√in_dim`, as [`linear`] starts one (for
/// parameters made some other way, such as the three projections that share one matrix in
/// [`FusedMultiHeadAttention`](crate::FusedMultiHeadAttention)).
pub fn fill_linear(layer: &mut nn::Linear, in_dim: i64) {
    let bound = 1.0 / (in_dim as f64).sqrt();
    let uniform = Init::Uniform { lo: -bound, up: bound };
    fill(&mut layer.ws, uniform);
    if let Some(bias) = layer.bs.as_mut() {
        fill(bias, uniform);
    }
}

/// `nn.Embedding(rows, dim)` as PyTorch initialises it: every entry from N(0, 1).
pub fn embedding<'a, P: std::borrow::Borrow<nn::Path<'a>>>(p: P, rows: i64, dim: i64) -> nn::Embedding {
    normal_embedding(p, rows, dim, 1.0)
}

/// An embedding table whose entries are drawn from N(0, `stdev`²) (GPT-2 starts its tables with 0.02).
pub fn normal_embedding<'a, P: std::borrow::Borrow<nn::Path<'a>>>(
    p: P,
    rows: i64,
    dim: i64,
    stdev: f64,
) -> nn::Embedding {
    let zeros = nn::EmbeddingConfig { ws_init: Init::Const(0.0), ..Default::default() };
    let mut table = nn::embedding(p, rows, dim, zeros);
    fill(&mut table.ws, Init::Randn { mean: 0.0, stdev });
    table
}

/// Overwrites `t` (a parameter, on any device) with values drawn from `init` on the CPU's generator.
pub fn fill(t: &mut Tensor, init: Init) {
    let drawn = nn::init(init, &t.size(), Device::Cpu).to_kind(t.kind());
    tch::no_grad(|| t.copy_(&drawn));
}

/// `Tensor::randn(shape)` drawn on the CPU's generator and placed on `device`: the same values for the
/// same seed on every device.
pub fn randn(shape: &[i64], device: Device) -> Tensor {
    Tensor::randn(shape, (Kind::Float, Device::Cpu)).to_device(device)
}

/// Every variable of `vs` with its name, sorted by name: a stable order for drawing random starts,
/// saving and loading (a `VarStore`'s own order changes from run to run, and so would the draws).
pub fn sorted_variables(vs: &nn::VarStore) -> Vec<(String, tch::Tensor)> {
    let mut variables: Vec<(String, tch::Tensor)> = vs.variables().into_iter().collect();
    variables.sort_by(|a, b| a.0.cmp(&b.0));
    variables
}

/// Xavier/Glorot-uniform for every matrix of `vs`, `U(-b, b)` with `b = √(6 / (fan_in + fan_out))`, and
/// zeros for biases; LayerNorm weights (ones) are vectors and stay as they are. This is the lecture notes'
/// start for the encoder-decoder: their `make_model`, from the Annotated Transformer, redraws this way
/// every parameter of two or more dimensions, the embedding tables included, and their text sets the
/// biases to 0 (their code leaves them at PyTorch's default). The 2017 paper's own code, tensor2tensor,
/// differs: its weight matrices are Glorot-uniform too, but its embedding tables are drawn from
/// a normal distribution of standard deviation d_model^-0.5 (variance 1/d_model).
pub fn xavier_uniform(vs: &nn::VarStore) {
    tch::no_grad(|| {
        for (name, mut t) in sorted_variables(vs) {
            let size = t.size();
            if size.len() >= 2 {
                let bound = (6.0 / (size[0] + size[1]) as f64).sqrt();
                fill(&mut t, Init::Uniform { lo: -bound, up: bound });
            } else if name.ends_with(".bias") && !name.contains("layer_norm") && !name.contains("LayerNorm") {
                let _ = t.zero_();
            }
        }
    });
}
