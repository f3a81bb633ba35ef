//! `anatomy attention`: what each head of a pretrained model attends to, as a picture or as JSON.
use std::path::PathBuf;

use anyhow::{Context, Result};
use tch::Device;
use transformer_anatomy::attention_view::{html_page, AttentionPicture, QueriesAndKeys};

use crate::ModelArg;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArg,
    /// The layer to show (0-based).
    #[arg(long, default_value_t = 0)]
    layer: usize,
    /// The head to show (0-based).
    #[arg(long, default_value_t = 0)]
    head: usize,
    /// head: lines between tokens; model: every layer × head; neuron: queries and keys of one token.
    #[arg(long, value_enum, default_value_t = View::Head)]
    view: View,
    /// For the neuron view: the position of the query token (with [CLS] at 0).
    #[arg(long, default_value_t = 1)]
    token: usize,
    /// Write the picture to this HTML file (default: attention.html).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print {"tokens": [...], "layer": L, "head": H, "weights": [[...], ...]} instead of a picture.
    #[arg(long)]
    json: bool,
    /// The text.
    text: String,
    /// An optional second text; the pair is shown with both sentences marked.
    text_b: Option<String>,
}

/// The values of `--view`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum View {
    Head,
    Model,
    Neuron,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::Head => "head",
            View::Model => "model",
            View::Neuron => "neuron",
        }
    }
}

pub fn run(args: Args, device: Device) -> Result<()> {
    let (tokenizer, model) = args.model.pretrained(device)?;
    let (encoding, output) = model.encode_text(&tokenizer, &args.text, args.text_b.as_deref())?;
    let sentence_b_start = encoding.token_type_ids.iter().position(|&t| t == 1);
    let picture = AttentionPicture::new(encoding.tokens.clone(), sentence_b_start, &output.attentions)?;
    picture.check(args.layer, args.head)?;
    if args.json {
        println!("{}", serde_json::to_string(&picture.head_json(args.layer, args.head)?)?);
        return Ok(());
    }
    let body = match args.view {
        View::Model => picture.model_view().0,
        View::Neuron => {
            let ids = encoding.ids_tensor(device);
            let (q, k) =
                model.queries_and_keys(&ids, Some(&encoding.type_ids_tensor(device)), args.layer, args.head)?;
            picture.neuron_view(args.layer, args.head, args.token, &QueriesAndKeys::from_tensors(&q, &k)?)?.0
        }
        View::Head => picture.head_view(args.layer, args.head)?.0,
    };
    let title = format!("attention: {}", [args.text.as_str(), args.text_b.as_deref().unwrap_or("")].join(" / "));
    let path = args.output.unwrap_or_else(|| PathBuf::from("attention.html"));
    std::fs::write(&path, html_page(&title, &body)).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "wrote {} ({} view, layer {}, head {}): open it in a browser, no network needed",
        path.display(),
        args.view.name(),
        args.layer,
        args.head
    );
    Ok(())
}
