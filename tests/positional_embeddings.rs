//! Chapter section 6: position embeddings, and why attention needs them.
mod common;

use rstest::rstest;
use tch::nn::{self, Module, ModuleT};
use tch::{Device, Kind, Tensor};
use transformer_anatomy::inspect::shape;
use transformer_anatomy::{BertConfig, Embeddings, EncoderOptions, TransformerEncoder};

fn random_ids(config: &BertConfig, batch: i64, seq: i64) -> Tensor {
    Tensor::randint(config.vocab_size, [batch, seq], (Kind::Int64, Device::Cpu))
}

#[rstest]
fn embeddings_give_one_vector_per_token(
    #[values(1, 3)] batch: i64,
    #[values(1, 5, 16)] seq: i64,
    #[values(BertConfig::bert_base_uncased(EncoderOptions::book()), BertConfig::tiny(EncoderOptions::book()))]
    config: BertConfig,
) {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    let embeddings = Embeddings::new(vs.root(), &config);
    let out = embeddings.forward_t(&random_ids(&config, batch, seq), false);
    assert_eq!(out.size(), [batch, seq, config.hidden_size]);
}

#[test]
fn embeddings_are_layer_norm_of_token_plus_position() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let e = Embeddings::new(vs.root(), &config);
    let ids = random_ids(&config, 2, 6);
    let positions = Tensor::arange(6, (Kind::Int64, Device::Cpu));
    let by_hand = e.layer_norm.forward(&(e.token_embeddings.forward(&ids) + e.position_embeddings.forward(&positions)));
    common::assert_close(&e.forward_t(&ids, false), &by_hand, 1e-6);
}

#[test]
fn the_same_token_at_two_positions_gets_two_vectors() {
    let _generator = common::seed();
    let config = BertConfig::tiny(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let e = Embeddings::new(vs.root(), &config);
    let out = e.forward_t(&Tensor::from_slice(&[7i64, 7]).view([1, 2]), false);
    assert!(common::max_abs_diff(&out.get(0).get(0), &out.get(0).get(1)) > 1e-3);
}

/// Encodes `ids`, optionally without the position embeddings (token embeddings straight into the layers).
fn encode(encoder: &TransformerEncoder, ids: &Tensor, with_positions: bool) -> Tensor {
    let x = if with_positions {
        encoder.embeddings.forward_t(ids, false)
    } else {
        encoder.embeddings.token_embeddings.forward(ids)
    };
    encoder.stack.forward(&x, None, false).last_hidden_state
}

#[rstest]
fn without_positions_the_encoder_cannot_tell_the_order(
    #[values(EncoderOptions::book(), EncoderOptions::bert())] options: EncoderOptions,
) {
    let _generator = common::seed();
    let config = BertConfig::tiny(options);
    let vs = nn::VarStore::new(Device::Cpu);
    let encoder = TransformerEncoder::new(vs.root(), &config).unwrap();
    let ids = Tensor::from_slice(&[11i64, 22, 33, 44, 55]).view([1, 5]);
    let order = Tensor::from_slice(&[3i64, 0, 4, 1, 2]);
    let shuffled = ids.index_select(1, &order);

    // Permutation-equivariant: shuffling the tokens only shuffles the outputs the same way.
    let out = encode(&encoder, &ids, false);
    common::assert_close(&encode(&encoder, &shuffled, false), &out.index_select(1, &order), 1e-5);

    // With position embeddings the outputs change, not just their order.
    let out = encode(&encoder, &ids, true);
    assert!(common::max_abs_diff(&encode(&encoder, &shuffled, true), &out.index_select(1, &order)) > 1e-3);
}

#[test]
fn parameters_have_hugging_face_names() {
    let _generator = common::seed();
    let vs = nn::VarStore::new(Device::Cpu);
    Embeddings::new(vs.root() / "embeddings", &BertConfig::tiny(EncoderOptions::book()));
    let mut names: Vec<(String, Vec<i64>)> = vs.variables().into_iter().map(|(n, t)| (n, t.size())).collect();
    names.sort();
    let listed: Vec<String> = names.iter().map(|(n, s)| format!("{n} {s:?}")).collect();
    assert_eq!(
        listed,
        [
            "embeddings.LayerNorm.bias [32]",
            "embeddings.LayerNorm.weight [32]",
            "embeddings.position_embeddings.weight [16, 32]",
            "embeddings.word_embeddings.weight [100, 32]"
        ]
    );
}

#[test]
fn positional_embeddings_shapes_snapshot() {
    let _generator = common::seed();
    let config = BertConfig::bert_base_uncased(EncoderOptions::book());
    let vs = nn::VarStore::new(Device::Cpu);
    let e = Embeddings::new(vs.root(), &config);
    let ids = common::tokenizer().encode("time flies like an arrow", false).unwrap().ids_tensor(Device::Cpu);
    snapshot!(
        "positional_embeddings_shapes",
        format!(
            "input_ids {}\nposition embedding table {}\nembeddings output {}",
            shape(&ids),
            shape(&e.position_embeddings.ws),
            shape(&e.forward_t(&ids, false))
        )
    );
}
