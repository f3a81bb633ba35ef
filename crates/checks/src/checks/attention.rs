//! Checks of the attention exercises (chapters 2 and 3): scaled dot-product attention, one head, and
//! cutting the hidden axis into heads.
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

use super::{
    call, expect_close_or_name, expect_rows_sum_to_one, named, parts, randn, told, CheckResult, Returned, TRANSPOSE,
};
use transformer_anatomy::exercises::support::Projections;

// The named mistakes of this module's checks, a constant each (`NO_EPS` for "no_eps") and a list per
// check, written from `crates/course/exercises.toml`, which declares them.
include!(concat!(env!("OUT_DIR"), "/mistakes_attention.rs"));

/// softmax(q kᵀ / scale) over `axis`, in f64: the reference and its classic variations.
fn weights(q: &Tensor, k: &Tensor, scale: f64, axis: i64) -> Tensor {
    (q.to_kind(Kind::Double).matmul(&k.to_kind(Kind::Double).transpose(-2, -1)) / scale)
        .softmax(axis, Kind::Double)
        .to_kind(Kind::Float)
}

/// `scaled_dot_product(query, key, value) -> (output, weights)`.
pub fn scaled_dot_product(f: &dyn Fn(&Tensor, &Tensor, &Tensor) -> (Tensor, Tensor)) -> CheckResult {
    let (batch, t, s, d, dv) = (2, 4, 6, 8, 5);
    let (q, k, v) = (randn(&[batch, t, d]) * 2.0, randn(&[batch, s, d]) * 2.0, randn(&[batch, s, dv]));
    let (output, w) = call(
        || f(&q, &k, &v),
        &[
            Returned::floats("output", &[batch, t, dv]).told(": one value-sized vector per query (weights · value)"),
            Returned::floats("weights", &[batch, t, s]).told(": one row per query, one column per key"),
        ],
        &[TRANSPOSE],
    )?;
    let root_d = (d as f64).sqrt();
    let mut mistakes = vec![
        (
            weights(&q, &k, 1.0, -1),
            named(NO_SCALING, "the scores are not scaled: divide q · kᵀ by √d before the softmax"),
        ),
        (weights(&q, &k, d as f64, -1), named(DIVIDED_BY_D, "the scores are divided by d; the chapter divides by √d")),
        (
            weights(&q, &k, root_d, 1),
            named(
                SOFTMAX_OVER_QUERIES,
                "the softmax runs over the queries (axis 1); each query's row must sum to 1 over the keys: \
                 softmax over the last axis (-1)",
            ),
        ),
    ];
    // √ of the size of an axis other than d: the batch, the queries, the keys, the values' width.
    let wrong_axis = named(
        ROOT_OF_THE_WRONG_AXIS,
        "the scores are divided by the square root of another axis's size; d is the size of the last axis of \
         query and key (`query.size()[2]`): divide by √d",
    );
    mistakes.extend([batch, t, s, dv].map(|n| (weights(&q, &k, (n as f64).sqrt(), -1), wrong_axis)));
    expect_close_or_name("weights", &w, &weights(&q, &k, root_d, -1), 1e-5, &mistakes)?;
    expect_rows_sum_to_one("weights", &w)?;
    let expected = Tensor::scaled_dot_product_attention(&q, &k, &v, None::<Tensor>, 0.0, false, None, false);
    expect_close_or_name("output", &output, &expected, 1e-5, &[])
}

/// `attention_head(hidden, projections) -> output`.
pub fn attention_head(f: &dyn Fn(&Tensor, &Projections) -> Tensor) -> CheckResult {
    let (batch, seq, d_model, head_dim) = (2, 5, 16, 8);
    let vs = nn::VarStore::new(Device::Cpu);
    let p = Projections::new(&vs.root(), d_model, head_dim);
    let x = randn(&[batch, seq, d_model]);
    // The keys not transposed are told here but not counted by name: the course names them in the other two.
    let output = call(
        || f(&x, &p),
        &[Returned::floats("output", &[batch, seq, head_dim]).told(": [batch, seq, head_dim], one vector per token")],
        &[(TRANSPOSE.0, told(TRANSPOSE.1.words))],
    )?;
    let (q, k, v) = (p.query.forward(&x), p.key.forward(&x), p.value.forward(&x));
    let sdpa = |q: &Tensor, k: &Tensor, v: &Tensor, scale: Option<f64>| {
        Tensor::scaled_dot_product_attention(q, k, v, None::<Tensor>, 0.0, false, scale, false)
    };
    expect_close_or_name(
        "output",
        &output,
        &sdpa(&q, &k, &v, None),
        1e-5,
        &[
            (
                sdpa(&q, &k, &k, None),
                named(VALUES_FROM_KEY_MAP, "the values come from the key map; use `projections.value` for them"),
            ),
            (
                sdpa(&q, &q, &v, None),
                named(KEYS_FROM_QUERY_MAP, "the keys come from the query map; use `projections.key` for them"),
            ),
            (
                sdpa(&q, &k, &v, Some(1.0 / (d_model as f64).sqrt())),
                named(
                    ROOT_OF_D_MODEL,
                    "the scores are divided by √d_model, the width of the hidden state; divide by √head_dim, the \
                     last axis of q and k",
                ),
            ),
            (sdpa(&q, &k, &v, Some(1.0)), told("the scores are not scaled: divide by √head_dim")),
        ],
    )
}

/// `split_heads(x, num_heads)` and `merge_heads(x)`.
/// The two functions are graded apart (a share of the points each), each on inputs of its own: a
/// `merge_heads` handed what `split_heads` was handed a moment before could give that back unmerged.
pub fn split_heads(split: &dyn Fn(&Tensor, i64) -> Tensor, merge: &dyn Fn(&Tensor) -> Tensor) -> CheckResult {
    let (batch, seq, heads, head_dim) = (2, 3, 4, 5);
    let x = randn(&[batch, seq, heads * head_dim]);
    parts(&[&|| the_split(&split, &x, &by_heads(&x, heads), heads), &|| the_merge(&merge, heads)])
}

/// `x` [batch, seq, heads · head_dim] as [batch, heads, seq, head_dim]: head h of token s holds the hidden
/// units h·head_dim .. (h+1)·head_dim of that token, written entry by entry, without view or transpose.
fn by_heads(x: &Tensor, heads: i64) -> Tensor {
    let (batch, seq, hidden) = x.size3().expect("3 axes");
    let head_dim = hidden / heads;
    let mut entries = Vec::new();
    for b in 0..batch {
        for h in 0..heads {
            for s in 0..seq {
                for j in 0..head_dim {
                    entries.push(x.double_value(&[b, s, h * head_dim + j]) as f32);
                }
            }
        }
    }
    Tensor::from_slice(&entries).view([batch, heads, seq, head_dim])
}

fn the_split(split: &dyn Fn(&Tensor, i64) -> Tensor, x: &Tensor, expected: &Tensor, heads: i64) -> CheckResult {
    let (batch, seq, hidden) = x.size3().expect("3 axes");
    let head_dim = hidden / heads;
    let returned = Returned::floats("split_heads([2, 3, 20], 4)", &[batch, heads, seq, head_dim]).said(named(
        HEADS_LEFT_BEHIND_TOKENS,
        ": [batch, heads, seq, head_dim] — view as [batch, seq, heads, head_dim], then swap axes 1 and 2",
    ));
    let split_x = call(|| split(x, heads), &[returned], &[])?;
    expect_close_or_name(
        "split_heads",
        &split_x,
        expected,
        0.0,
        &[(
            x.reshape([batch, heads, seq, head_dim]),
            named(
                VIEW_WITHOUT_TRANSPOSE,
                "a view straight to [batch, heads, seq, head_dim] without transpose: view keeps the memory \
                 order, so a 'head' holds pieces of several tokens; view as [batch, seq, heads, head_dim], then \
                 transpose(1, 2)",
            ),
        )],
    )
}

fn the_merge(merge: &dyn Fn(&Tensor) -> Tensor, heads: i64) -> CheckResult {
    let (batch, seq, hidden) = (3, 2, heads * 3);
    let x = randn(&[batch, seq, hidden]);
    let split = by_heads(&x, heads);
    let merged = call(
        || merge(&split),
        &[Returned::floats("merge_heads", &[batch, seq, hidden]).told(": back to [batch, seq, heads · head_dim]")],
        &[(
            "view size is not compatible",
            named(
                VIEW_OF_NON_CONTIGUOUS,
                "after a transpose the tensor is not contiguous: call `.contiguous()` before `.view`, or use \
                 `.reshape`",
            ),
        )],
    )?;
    expect_close_or_name(
        "merge_heads(split_heads(x))",
        &merged,
        &x,
        0.0,
        &[(
            split.reshape([batch, seq, hidden]),
            named(
                MERGED_WITHOUT_TRANSPOSE,
                "merged without transposing back: transpose(1, 2) first, so that each token's heads sit side by side",
            ),
        )],
    )
}
