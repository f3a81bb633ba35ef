//! Chapter 12's pooling: one vector per text from the encoder's hidden states.
//!
//! Every test here holds the file's one random generator (`common::generator`) from its first line: most
//! seed it and draw, and the others build models, which draws too. Without it, plain `cargo test` runs them
//! side by side and one test's draws shift another's seeded ones (seen: the tokens' shares test got a head
//! whose shares summed to −0.61 instead of more than 1 in absolute value).
mod common;

use tch::{Device, Kind, Tensor};
use transformer_anatomy::classify::frozen::{train_head, HeadConfig, HeadOptions, TrainedHead};
use transformer_anatomy::classify::{pool, Pooling};
use transformer_anatomy::pooling::masked_mean;

/// The masked mean written out in f64 loops: an independent computation of sentence-transformers'
/// formula.
fn by_hand(hidden: &[Vec<Vec<f64>>], mask: &[Vec<i64>]) -> Vec<Vec<f64>> {
    hidden
        .iter()
        .zip(mask)
        .map(|(rows, m)| {
            let n = m.iter().sum::<i64>().max(0) as f64;
            let h = rows[0].len();
            (0..h).map(|j| rows.iter().zip(m).map(|(r, &k)| r[j] * k as f64).sum::<f64>() / n.max(1e-9)).collect()
        })
        .collect()
}

#[test]
fn the_mean_leaves_padding_out_and_cls_is_the_first_position() {
    let _generator = common::generator();
    tch::manual_seed(3);
    let hidden = Tensor::randn([3, 5, 4], (Kind::Float, Device::Cpu));
    let mask = Tensor::from_slice(&[1i64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]).view([3, 5]);
    let got = Vec::<Vec<f64>>::try_from(&masked_mean(&hidden, &mask).to_kind(Kind::Double)).unwrap();
    let values = Vec::<Vec<Vec<f64>>>::try_from(&hidden.to_kind(Kind::Double)).unwrap();
    let mask_rows = Vec::<Vec<i64>>::try_from(&mask).unwrap();
    let want = by_hand(&values, &mask_rows);
    for (g, w) in got.iter().flatten().zip(want.iter().flatten()) {
        assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    }
    // The third text has no real token: its mean is 0, not NaN.
    assert!(got[2].iter().all(|&v| v == 0.0));
    // What padding holds does not matter.
    let noisy = hidden.where_self(&mask.unsqueeze(-1).ne(0), &Tensor::full([3, 5, 4], 1e6, (Kind::Float, Device::Cpu)));
    assert!(masked_mean(&noisy, &mask).allclose(&masked_mean(&hidden, &mask), 1e-5, 1e-6, false));
    // [CLS] is position 0, whatever the mask.
    assert!(pool(&hidden, &mask, Pooling::Cls).equal(&hidden.select(1, 0)));
    assert_eq!(pool(&hidden, &mask, Pooling::Mean).size(), [3, 4]);
}

/// A head trained on separable made-up features learns them (one batch overfits to a small loss), and
/// survives a save and a load unchanged.
#[test]
fn the_head_learns_separable_features_and_saves_and_loads_unchanged() {
    let _generator = common::generator();
    tch::manual_seed(5);
    let labels: Vec<usize> = (0..64).map(|i| i % 2).collect();
    let direction = Tensor::randn([1, 8], (Kind::Float, Device::Cpu));
    let sign = Tensor::from_slice(&labels.iter().map(|&l| if l == 1 { 1.0f32 } else { -1.0 }).collect::<Vec<_>>())
        .view([64, 1]);
    let x = Tensor::randn([64, 8], (Kind::Float, Device::Cpu)) * 0.1 + &direction * &sign * 2.0;
    let options = HeadOptions { epochs: 300, lr: 1e-2, batch: 64, dropout: 0.0, ..HeadOptions::default() };
    let head = train_head((&x, &labels), (&x, &labels), options).unwrap();
    assert_eq!(head.predict(&x), labels);
    assert!(head.curve.last().unwrap().train_loss < 0.05, "{:?}", head.curve.last());
    let path = std::env::temp_dir().join(format!("anatomy-head-{}.safetensors", std::process::id()));
    let config = HeadConfig {
        labels: vec!["ham".into(), "spam".into()],
        pooling: Pooling::Mean,
        max_len: 64,
        model: "made-up".into(),
        hidden_size: 8,
    };
    head.save(&path, &config).unwrap();
    let (loaded, loaded_config) = TrainedHead::load(&path, Device::Cpu).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(loaded_config, config);
    assert!(loaded.logits(&x).equal(&head.logits(&x)), "the same logits after a save and a load");
}

/// Fine-tuning MiniLM with the head on one batch of eight messages, again and again, drives the loss
/// near zero: the gradient reaches the head and the body, and the optimiser follows it.
#[test]
fn fine_tuning_overfits_one_batch() {
    let _generator = common::generator();
    use transformer_anatomy::classify::data::{Example, Part};
    use transformer_anatomy::classify::fine_tune::{evaluate, fine_tune, FineTuneOptions};
    use transformer_anatomy::model_dir::resolve_model_dir;
    use transformer_anatomy::{AttentionKind, BertModel, Tokenizer};
    let dir = resolve_model_dir(None).unwrap();
    let tokenizer = Tokenizer::from_model_dir(&dir).unwrap();
    let mut model = BertModel::from_pretrained(&dir, AttentionKind::Fused, Device::Cpu).unwrap();
    let texts = [
        ("Cheap meds online, no prescription, order now", 1),
        ("Re: the build fails on ARM after the last merge", 0),
        ("You have WON a free cruise, click to claim", 1),
        ("Minutes of Tuesday's meeting attached", 0),
        ("Lose 30 pounds in 30 days guaranteed", 1),
        ("Can you review my patch to the parser?", 0),
        ("Make $5000 a week from home!!!", 1),
        ("Lunch on Friday? The usual place", 0),
    ];
    let examples: Vec<Example> = texts
        .iter()
        .enumerate()
        .map(|(i, (text, label))| Example {
            id: format!("made-up/{i}"),
            group: if *label == 1 { "spam-1".into() } else { "easy-ham-1".into() },
            label: *label,
            subject: text.to_string(),
            body: String::new(),
            part: Part::Train,
        })
        .collect();
    let batch: Vec<&Example> = examples.iter().collect();
    let options =
        FineTuneOptions { max_len: 24, epochs: 25, batch: 8, lr: 1e-4, warmup: 0.0, ..FineTuneOptions::default() };
    let tuned = fine_tune(&mut model, &tokenizer, &batch, &batch, options, &mut |_| {}).unwrap();
    let (first, last) = (tuned.steps[0].loss, tuned.steps.last().unwrap().loss);
    assert!(first > 0.3 && last < 0.05, "the loss went from {first:.3} to {last:.3}");
    let (loss, m) = evaluate(&model, &tuned.classifier, &tokenizer, &batch, &options).unwrap();
    assert_eq!(m.accuracy, 1.0, "{m:?}");
    assert!(loss < 0.05, "{loss}");
}

/// Our tokenizer's cut, MiniLM in the chapter's modules and our pooling give what Hugging Face gives on
/// a padded batch: tests/data/spam_pooling_reference.json, written by `scripts/classify_pytorch.py
/// reference` (ids, and each pooled vector's first 16 numbers, sum and norm, to 1e-4).
#[test]
fn pooling_real_minilm_outputs_matches_hugging_face() {
    let _generator = common::generator();
    use transformer_anatomy::classify::features::{batch, token_ids};
    use transformer_anatomy::model_dir::resolve_model_dir;
    use transformer_anatomy::{AttentionKind, BertModel, Pass, Tokenizer};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spam_pooling_reference.json");
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = resolve_model_dir(None).unwrap();
    let tokenizer = Tokenizer::from_model_dir(&dir).unwrap();
    let model = BertModel::from_pretrained(&dir, AttentionKind::Fused, Device::Cpu).unwrap();
    let max_len = reference["max_len"].as_u64().unwrap() as usize;
    let ids: Vec<Vec<i64>> = reference["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| token_ids(&tokenizer, t.as_str().unwrap(), max_len).unwrap())
        .collect();
    let wanted: Vec<Vec<i64>> = serde_json::from_value(reference["input_ids"].clone()).unwrap();
    assert_eq!(ids, wanted, "the same ids, cut the same way");
    let rows: Vec<&[i64]> = ids.iter().map(Vec::as_slice).collect();
    let (input, mask) = batch(&rows, Device::Cpu);
    let hidden = model.forward(&input, None, Some(&mask), Pass::EVAL).unwrap().last_hidden_state;
    for (name, pooling) in [("cls", Pooling::Cls), ("mean", Pooling::Mean)] {
        let pooled = pool(&hidden, &mask, pooling).to_kind(Kind::Double);
        for (i, want) in reference["pooled"][name].as_array().unwrap().iter().enumerate() {
            let v = Vec::<f64>::try_from(&pooled.get(i as i64)).unwrap();
            let first: Vec<f64> = serde_json::from_value(want["first16"].clone()).unwrap();
            for (a, b) in v.iter().zip(&first) {
                assert!((a - b).abs() < 1e-4, "{name} text {i}: {a} vs {b}");
            }
            let (sum, l2) = (v.iter().sum::<f64>(), v.iter().map(|x| x * x).sum::<f64>().sqrt());
            assert!((sum - want["sum"].as_f64().unwrap()).abs() < 1e-3, "{name} text {i}: sum {sum}");
            assert!((l2 - want["l2"].as_f64().unwrap()).abs() < 1e-4, "{name} text {i}: norm {l2}");
        }
    }
}

/// With mean pooling, a text's decision splits exactly: the word pieces' shares `tokens_that_mattered`
/// lists, plus the shares of [CLS] and [SEP] it reports apart, plus the head's constant (its bias
/// difference less the centring on the training set's mean), equal spam's logit minus ham's to 1e-5 —
/// the logits computed here from the head's own weights, in double precision, on the same hidden states.
#[test]
fn the_tokens_shares_add_up_to_the_decision() {
    let _generator = common::generator();
    use transformer_anatomy::classify::tokens_that_mattered;
    use transformer_anatomy::model_dir::resolve_model_dir;
    use transformer_anatomy::{AttentionKind, BertModel, Pass, Tokenizer};
    let dir = resolve_model_dir(None).unwrap();
    let tokenizer = Tokenizer::from_model_dir(&dir).unwrap();
    let model = BertModel::from_pretrained(&dir, AttentionKind::Fused, Device::Cpu).unwrap();
    // A head with made-up weights, bias and scaling: any linear head must split this way.
    tch::manual_seed(9);
    let x = Tensor::randn([16, 384], (Kind::Float, Device::Cpu));
    let labels: Vec<usize> = (0..16).map(|i| i % 2).collect();
    let options = HeadOptions { epochs: 2, ..HeadOptions::default() };
    let mut head = train_head((&x, &labels), (&x, &labels), options).unwrap();
    tch::no_grad(|| {
        head.classifier.ws.copy_(&Tensor::randn([2, 384], (Kind::Float, Device::Cpu)));
        head.classifier.bs.as_mut().unwrap().copy_(&Tensor::from_slice(&[0.7f32, -1.3]));
    });
    let text = "Win a free cruise today: click the link below to claim it";
    let shares = tokens_that_mattered(&model, &tokenizer, text, 64, Pooling::Mean, &head.direction(), 1).unwrap();
    let ids = transformer_anatomy::classify::features::token_ids(&tokenizer, text, 64).unwrap();
    assert_eq!(shares.tokens.len(), ids.len() - 2, "every word piece but [CLS] and [SEP]");
    let _no_grad = tch::no_grad_guard();
    let input = Tensor::from_slice(&ids).view([1, -1]);
    let hidden = model.forward(&input, None, None, Pass::WEIGHTS).unwrap().last_hidden_state.get(0); // [n, 384]
    let double = |t: &Tensor| t.to_kind(Kind::Double);
    let pooled = double(&hidden).mean_dim(0, false, Kind::Double); // [384]
    let features = (pooled - double(&head.shift)) / double(&head.scale);
    let logits = double(&head.classifier.ws).matmul(&features) + double(head.classifier.bs.as_ref().unwrap()); // [2]
    let difference = (logits.get(1) - logits.get(0)).double_value(&[]);
    let listed: f64 = shares.tokens.iter().map(|(_, s)| s).sum();
    let constant = head.constant();
    assert!(
        listed.abs() > 1.0 && constant.abs() > 0.1,
        "parts large enough to tell a dropped one: {listed}, {constant}"
    );
    let total = listed + shares.special + constant;
    assert!(
        (total - difference).abs() < 1e-5,
        "{listed} + {} + {constant} = {total}, not {difference}",
        shares.special
    );
    // Sorted towards the label asked for; asking for ham turns every share's sign.
    assert!(shares.tokens.windows(2).all(|p| p[0].1 >= p[1].1));
    let towards_ham = tokens_that_mattered(&model, &tokenizer, text, 64, Pooling::Mean, &head.direction(), 0).unwrap();
    assert!((towards_ham.tokens[0].1 + shares.tokens.last().unwrap().1).abs() < 1e-9);
    assert!((towards_ham.special + shares.special).abs() < 1e-9);
}

/// One fine-tuning step, ours against Hugging Face's (`scripts/classify_pytorch.py step-reference` wrote
/// tests/data/spam_step_reference.json): MiniLM with every dropout rate at 0 so both sides compute the
/// same numbers, the same head (from a formula), three texts cut to 16 tokens. `train_step` must give
/// the same loss, the same clipped gradients and, after fused AdamW's update, the same loss again.
#[test]
fn one_fine_tuning_step_matches_hugging_face() {
    let _generator = common::generator();
    use tch::nn;
    use transformer_anatomy::classify::features::{read_batch, token_ids};
    use transformer_anatomy::classify::fine_tune::train_step;
    use transformer_anatomy::model_dir::resolve_model_dir;
    use transformer_anatomy::training::fused_adamw::FusedAdamW;
    use transformer_anatomy::{AttentionKind, BertConfig, BertModel, EncoderOptions, Pass, Tokenizer};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spam_step_reference.json");
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = resolve_model_dir(None).unwrap();
    let tokenizer = Tokenizer::from_model_dir(&dir).unwrap();
    let config = BertConfig {
        hidden_dropout_prob: 0.0,
        attention_probs_dropout_prob: 0.0,
        ..BertConfig::from_file(&dir, EncoderOptions::bert()).unwrap()
    };
    let model =
        BertModel::from_config_and_weights(&config, &dir.join("model.safetensors"), AttentionKind::Fused, Device::Cpu)
            .unwrap();
    let h = config.hidden_size;
    let classifier = transformer_anatomy::init::linear(model.vs.root() / "classifier", h, 2);
    tch::no_grad(|| {
        let k = Tensor::arange(2 * h, (Kind::Double, Device::Cpu)).view([2, h]);
        classifier.ws.shallow_clone().copy_(&((k + 1.0).sin() * 0.05));
        classifier.bs.as_ref().unwrap().shallow_clone().copy_(&Tensor::from_slice(&[0.01f32, -0.02]));
    });
    let texts: Vec<String> = serde_json::from_value(reference["texts"].clone()).unwrap();
    let ids: Vec<Vec<i64>> = texts.iter().map(|t| token_ids(&tokenizer, t, 16).unwrap()).collect();
    assert_eq!(serde_json::to_value(&ids).unwrap(), reference["input_ids"], "the same cut");
    let rows: Vec<&[i64]> = ids.iter().map(Vec::as_slice).collect();
    let labels: Vec<i64> = serde_json::from_value(reference["labels"].clone()).unwrap();
    let mut optimizer = FusedAdamW::new(&model.vs, nn::AdamW { wd: 0.01, ..Default::default() }, 5e-5).unwrap();
    let loss =
        tch::with_grad(|| train_step(&model, &classifier, &mut optimizer, &rows, &labels, Pooling::Mean, 1.0)).unwrap();
    let close = |ours: f64, theirs: &serde_json::Value, tolerance: f64, what: &str| {
        let theirs = theirs.as_f64().unwrap();
        assert!(
            (ours - theirs).abs() <= tolerance * theirs.abs().max(1.0),
            "{what}: ours {ours}, Hugging Face {theirs}"
        );
    };
    close(loss, &reference["loss"], 1e-5, "loss");
    let variables = model.vs.variables();
    for (name, theirs) in reference["clipped_grads"].as_object().unwrap() {
        let grad = variables[name].grad().to_kind(Kind::Double);
        close(grad.norm().double_value(&[]), &theirs["l2"], 1e-4, &format!("{name}: gradient norm"));
        close(grad.sum(Kind::Double).double_value(&[]), &theirs["sum"], 1e-4, &format!("{name}: gradient sum"));
    }
    let after = tch::no_grad(|| {
        let (hidden, mask) = read_batch(&model, &rows, Pass::EVAL).unwrap();
        let logits = tch::nn::Module::forward(&classifier, &pool(&hidden, &mask, Pooling::Mean));
        logits.cross_entropy_for_logits(&Tensor::from_slice(&labels)).double_value(&[])
    });
    close(after, &reference["loss_after_step"], 1e-5, "loss after the step");
}
