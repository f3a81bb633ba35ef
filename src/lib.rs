//! # transformer-anatomy
//!
//! The "Transformer Anatomy" chapter of *Natural Language Processing with Transformers* (chapter 3),
//! rebuilt step by step in Rust on LibTorch through the `tch` crate. Each module is one step of the
//! chapter, in the order the chapter takes them, and the data flows one way:
//!
//! ```text
//! text ─tokenize─▶ ids [b, s] ─Embeddings─▶ x [b, s, h] ─TransformerEncoderLayer × N─▶ x [b, s, h]
//!      ─first token, dropout, linear─▶ logits [b, num_labels]
//! ```
//!
//! Every module takes its parameters from an `nn::Path` of a `VarStore`, whose device (CPU or CUDA)
//! they run on, and the sub-paths are Hugging Face BERT's names, so a real checkpoint's tensors land
//! where they belong. Layers with dropout implement `nn::ModuleT`: pass `train = false` to evaluate.
//!
//! ```no_run
//! use tch::{nn, nn::ModuleT, Device};
//! use transformer_anatomy::{BertConfig, EncoderOptions, TransformerEncoder, Tokenizer};
//!
//! let tokenizer = Tokenizer::from_model_dir("models/all-MiniLM-L6-v2")?;
//! let ids = tokenizer.encode("time flies like an arrow", false)?.ids_tensor(Device::Cpu); // [1, 5]
//! let vs = nn::VarStore::new(Device::Cpu);
//! let encoder = TransformerEncoder::new(vs.root(), &BertConfig::bert_base_uncased(EncoderOptions::book()))?;
//! let hidden = encoder.try_forward(&ids, None, None, false)?.last_hidden_state; // [1, 5, 768]
//! # Ok::<(), anyhow::Error>(())
//! ```

// The chapter's steps, in its order. Each module names the chapters whose header (`*Code: …*`) names
// its file, and no other: `cargo anatomy notebooks chapter-map --write` writes them from the headers.
pub mod overview; // chapters/00-overview.md
pub mod tokenize; // chapters/01-tokenize.md
pub mod config; // chapters/01-tokenize.md
pub mod init; // PyTorch's default initialisation, for every step's parameters
pub mod embeddings; // chapters/01-tokenize.md, chapters/06-positional-embeddings.md
pub mod scaled_dot_product; // chapters/02-self-attention.md
pub mod attention; // chapters/03-multi-head-attention.md: the one attention call, which every attention block makes
pub mod attention_head; // chapters/03-multi-head-attention.md
pub mod multi_head_attention; // chapters/03-multi-head-attention.md
pub mod fused_attention; // chapters/03-multi-head-attention.md
pub mod feed_forward; // chapters/04-feed-forward.md
pub mod residual; // chapters/05-layer-norm-and-encoder-layer.md
pub mod encoder_layer; // chapters/05-layer-norm-and-encoder-layer.md
pub mod encoder; // chapters/07-encoder-and-classifier.md
pub mod classifier; // chapters/07-encoder-and-classifier.md
pub mod masks; // chapters/08-decoder-and-masking.md

// The decoder side and the original encoder-decoder Transformer.
pub mod positional_encoding; // chapters/08-decoder-and-masking.md
pub mod decoder_layer; // chapters/08-decoder-and-masking.md, chapters/11-gpt.md (its masked self-attention)
pub mod decoder; // chapters/08-decoder-and-masking.md
pub mod encoder_decoder; // chapters/08-decoder-and-masking.md

// Training it and decoding with it, then the decoder branch and the body with a head on a real task.
pub mod training; // chapters/10-training.md, chapters/11-gpt.md (its fused AdamW)
pub mod decoding; // chapters/10-training.md
pub mod inference_mode; // chapters/10-training.md: evaluation without autograd's bookkeeping, for decoding step by step
pub mod pooling; // one vector per text: the masked mean, for `pretrained`'s sentence embedding and `classify`'s head
pub mod gpt; // chapters/11-gpt.md: the decoder branch, a small GPT
pub mod classify; // chapters/12-spam-filter.md: the body and a head on a real task

// Real weights, and what a notebook's kernel prints when it starts.
pub mod pretrained; // chapters/09-meet-the-transformers.md
pub mod runtime; // which LibTorch, CUDA, cuDNN, driver and GPUs this program runs on
pub mod notebook; // the line a notebook's set-up cell prints

// Pictures (feature `pictures`, on by default; the exercises' checks build without it, but their class
// report's charts use `html`'s escaping and titles, which need no feature).
pub mod html;
#[cfg(feature = "pictures")]
pub mod attention_view; // chapters/09-meet-the-transformers.md
#[cfg(feature = "pictures")]
pub mod display; // chapters/00-overview.md (the landmark models)
#[cfg(feature = "pictures")]
pub mod charts; // chapters/10-training.md

// What an exercise hands a student (the exercises themselves are crates/course, checks and exercises), and helpers.
pub mod exercises;
pub mod inspect;
pub mod seeds; // a figure over several seeds: its mean and range
pub mod model_dir;
pub mod project; // where the project's folders are, found when the program runs

pub use attention::{Attention, AttentionOutput, Pass};
pub use attention_head::AttentionHead;
pub use classifier::TransformerForSequenceClassification;
pub use config::{Activation, AttentionKind, BertConfig, EncoderOptions, LayerConfig, LayerNormPlacement, StackConfig};
pub use decoder::{DecoderOutput, TransformerDecoder};
pub use decoder_layer::{DecoderLayerOutput, LayerCache, TransformerDecoderLayer};
pub use embeddings::{check_input_ids, token_embedding, Embeddings};
pub use encoder::{EncoderOutput, EncoderStack, TransformerEncoder};
pub use encoder_decoder::{EncoderDecoder, ScaledEmbedding, Seq2SeqConfig};
pub use encoder_layer::{AttentionBlock, LayerOutput, TransformerEncoderLayer};
pub use feed_forward::FeedForward;
pub use fused_attention::FusedMultiHeadAttention;
#[cfg(feature = "pictures")]
pub use html::Html;
pub use masks::{causal_mask, decoder_mask, padding_mask};
pub use multi_head_attention::MultiHeadAttention;
pub use positional_encoding::sinusoidal_positions;
pub use pretrained::{mean_pooled_embedding, BertModel, BertOutput, LoadReport};
pub use residual::Residual;
pub use scaled_dot_product::{
    attend, attention_scores, attention_weights, masked_attention_weights, scaled_dot_product_attention,
};
pub use tokenize::{Encoding, Tokenizer};
