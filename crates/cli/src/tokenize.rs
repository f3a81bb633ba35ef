//! `anatomy tokenize`: the first step of `chapters/01-tokenize.md` on its own.
use anyhow::Result;
use transformer_anatomy::{model_dir::resolve_model_dir, Tokenizer};

use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
    /// Add [CLS] and [SEP] as BERT expects (the chapter leaves them out at first).
    #[arg(long)]
    special_tokens: bool,
    /// Print {"input_ids": [...], "token_type_ids": [...], "tokens": [...]}.
    #[arg(long)]
    json: bool,
    /// The text to tokenize.
    text: String,
    /// An optional second text, making a pair.
    text_b: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    let tokenizer = Tokenizer::from_model_dir(resolve_model_dir(args.model.model)?)?;
    let encoding = match &args.text_b {
        Some(b) => tokenizer.encode_pair(&args.text, b, args.special_tokens)?,
        None => tokenizer.encode(&args.text, args.special_tokens)?,
    };
    if args.json {
        println!("{}", serde_json::to_string(&encoding)?);
    } else {
        println!("input_ids:      {:?}", encoding.input_ids);
        println!("token_type_ids: {:?}", encoding.token_type_ids);
        println!("tokens:         {:?}", encoding.tokens);
    }
    Ok(())
}
