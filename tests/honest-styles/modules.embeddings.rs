//! A module of the student's own (`mod parts { … }`, reached through `self::`), a trait of its own and a
//! type that implements it, a unit test, and a doc comment that names the finished operations: all the
//! student's.
use tch::nn::{self, Module};
use tch::Tensor;

mod parts {
    use tch::{Kind, Tensor};

    /// Position ids 0, 1, …, seq − 1, one row.
    pub fn positions(seq: i64, like: &Tensor) -> Tensor {
        Tensor::arange(seq, (Kind::Int64, like.device())).unsqueeze(0)
    }
}

trait Embed {
    fn embed(&self, ids: &Tensor) -> Tensor;
}

struct Summed<'a> {
    tokens: &'a nn::Embedding,
    positions: &'a nn::Embedding,
}

impl Embed for Summed<'_> {
    fn embed(&self, ids: &Tensor) -> Tensor {
        self.tokens.forward(ids) + self.positions.forward(&self::parts::positions(ids.size()[1], ids))
    }
}

/// Not `scaled_dot_product_attention`, not a `multi_head_attention`: words in a comment are only words.
pub fn embeddings(
    input_ids: &Tensor,
    token_embeddings: &nn::Embedding,
    position_embeddings: &nn::Embedding,
    layer_norm: &nn::LayerNorm,
) -> Tensor {
    let summed = Summed { tokens: token_embeddings, positions: position_embeddings };
    layer_norm.forward(&summed.embed(input_ids))
}

#[cfg(test)]
mod tests {
    #[test]
    fn positions_count_from_zero() {
        let ids = tch::Tensor::zeros([1, 3], (tch::Kind::Int64, tch::Device::Cpu));
        assert_eq!(super::parts::positions(3, &ids).int64_value(&[0, 2]), 2);
    }
}
