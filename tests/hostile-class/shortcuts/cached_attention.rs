//! expect: uses `scaled_dot_product_attention`, libtorch's finished attention
//! Appends to the cache by hand, then attends through a function pointer to libtorch's kernel, reached
//! through a renamed import.
use tch::Tensor as T;

pub fn cached_attention(past_keys: &T, past_values: &T, query: &T, key: &T, value: &T) -> (T, T, T) {
    let keys = T::cat(&[past_keys, key], 2);
    let values = T::cat(&[past_values, value], 2);
    let attend: fn(&T, &T, &T, Option<T>, f64, bool, Option<f64>, bool) -> T = T::scaled_dot_product_attention::<T>;
    (attend(query, &keys, &values, None, 0.0, false, None, false), keys, values)
}
