//! Small helpers to look at tensors: the shape as the chapter prints it and a short preview of values.
//! The tour, the tests and the notebooks all use these, so they show the same numbers.
use tch::{IndexOp, Kind, Tensor};

extern "C" {
    fn anatomy_is_nested(tensor: *const std::ffi::c_void) -> bool;
}

/// Whether `t` is a nested tensor (several tensors of different shapes held as one, `torch.nested`): it has
/// no single shape, and `t.size()` would panic. tch cannot ask; `src/layout.cpp` does.
pub fn is_nested(t: &Tensor) -> bool {
    // SAFETY: `as_ptr` is the at::Tensor this Tensor holds, alive for the call.
    unsafe { anatomy_is_nested(t.as_ptr().cast()) }
}

/// The shape as a list, `[1, 5, 768]`.
pub fn shape(t: &Tensor) -> String {
    format!("{:?}", t.size())
}

/// The values of a 1-D tensor (or of any tensor, flattened) as `f64`s.
pub fn values(t: &Tensor) -> Vec<f64> {
    Vec::<f64>::try_from(&t.to_kind(Kind::Double).flatten(0, -1)).expect("a CPU-readable tensor")
}

/// The first `n` values of the first row (last axis) of a tensor, formatted to four decimals, with `…`
/// when the row is longer: `[0.1234, -0.5678, …]`.
pub fn preview_first_row(t: &Tensor, n: usize) -> String {
    let mut row = t.shallow_clone();
    while row.dim() > 1 {
        row = row.i(0);
    }
    let v = values(&row);
    let shown: Vec<String> = v.iter().take(n).map(|x| format_value(*x)).collect();
    let more = if v.len() > n { ", …" } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// A number as the tour prints it: four decimals, and `-inf`/`inf`/`NaN` spelled out.
pub fn format_value(x: f64) -> String {
    if x.is_infinite() {
        if x < 0.0 {
            "-inf".into()
        } else {
            "inf".into()
        }
    } else {
        format!("{x:.4}")
    }
}

/// Every value of a tensor, four decimals each: `[1.0000, 0.5000]`. What a notebook prints when the last
/// bits depend on the CPU: a float32 softmax row sums to 1.0 on one processor and to 0.99999994 on
/// another (its vector width changes the order of the additions), and both read `1.0000`.
///
/// ```
/// use tch::Tensor;
/// use transformer_anatomy::inspect::format_values;
///
/// let sums = Tensor::from_slice(&[1.0f32, 0.99999994, 1.0000001]);
/// assert_eq!(format_values(&sums), "[1.0000, 1.0000, 1.0000]");
/// ```
pub fn format_values(t: &Tensor) -> String {
    let shown: Vec<String> = values(t).into_iter().map(format_value).collect();
    format!("[{}]", shown.join(", "))
}

/// The largest absolute difference between two tensors of the same shape: how the tests, the tour and
/// the exercise checks compare a result with an independent computation.
///
/// ```
/// use tch::Tensor;
/// use transformer_anatomy::inspect::max_abs_diff;
///
/// let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
/// let b = Tensor::from_slice(&[1.0f32, 2.5, 3.0]);
/// assert_eq!(max_abs_diff(&a, &b), 0.5);
/// ```
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.size(), b.size(), "shapes differ");
    (a.to_kind(Kind::Double) - b.to_kind(Kind::Double)).abs().max().double_value(&[])
}
