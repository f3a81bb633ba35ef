//! `anatomy encode`: a pretrained model's last hidden state and sentence embedding for a text.
use anyhow::Result;
use tch::{Device, IndexOp};
use transformer_anatomy::inspect::{preview_first_row, shape, values};
use transformer_anatomy::mean_pooled_embedding;

use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
    /// Print {"tokens": [...], "last_hidden_state": [[...], ...], "sentence_embedding": [...]}.
    #[arg(long)]
    json: bool,
    /// The text.
    text: String,
    /// An optional second text, making a pair.
    text_b: Option<String>,
}

pub fn run(args: Args, device: Device) -> Result<()> {
    let (tokenizer, model) = args.model.pretrained(device)?;
    let (encoding, output) = model.encode_text(&tokenizer, &args.text, args.text_b.as_deref())?;
    let hidden = output.last_hidden_state.i(0); // [seq, hidden]
    let embedding = mean_pooled_embedding(&output.last_hidden_state, None).i(0); // [hidden]
    if args.json {
        let rows: Vec<Vec<f64>> = (0..hidden.size()[0]).map(|t| values(&hidden.i(t))).collect();
        let json = serde_json::json!({"tokens": encoding.tokens, "last_hidden_state": rows, "sentence_embedding": values(&embedding)});
        println!("{json}");
        return Ok(());
    }
    println!("tokens              {:?}", encoding.tokens);
    println!("last_hidden_state   {}", shape(&output.last_hidden_state));
    for (t, token) in encoding.tokens.iter().enumerate() {
        println!("  {token:<16}  {}", preview_first_row(&hidden.i(t as i64), 6));
    }
    println!("sentence_embedding  {} (mean of the token vectors, length 1)", shape(&embedding));
    println!("  {}", preview_first_row(&embedding, 8));
    Ok(())
}
