//! Mistakes that can be counted. A check names a known wrong answer in words a student can act on ("the
//! variance is the unbiased one"); summed over a class, those names tell a lecturer which step went wrong
//! and how. So every outcome that is not a pass carries a stable id: the named mistake's (the same name
//! as its wrong answer in `tests/exercise-mistakes/EXERCISE/ID.rs`, whose test checks that the grader
//! gives exactly that id), one of the grader's own ([`STOPS`]: refusals, compile errors, the sandbox's
//! limits), or [`UNNAMED`] for a failure no name covers.
//!
//! The id is read off the message the check gave, by a phrase only that mistake's message holds
//! ([`NAMED`]): the words stay where the checks write them, and this list says which words make a name.

/// A failure no named mistake covers: a wrong value the checks know no name for, or a panic.
pub const UNNAMED: &str = "unnamed";

/// A named mistake of one exercise: its id and the phrase only its message holds.
#[derive(Debug, Clone, Copy)]
pub struct Named {
    pub exercise: &'static str,
    pub id: &'static str,
    pub phrase: &'static str,
}

const fn named(exercise: &'static str, id: &'static str, phrase: &'static str) -> Named {
    Named { exercise, id, phrase }
}

/// Every named mistake, by exercise in course order. Within an exercise the first phrase found wins, so
/// a phrase that another message of the same exercise could hold comes after the more specific ones.
pub const NAMED: &[Named] = &[
    named("scaled_dot_product", "no_scaling", "are not scaled"),
    named("scaled_dot_product", "divided_by_d", "divided by d;"),
    named("scaled_dot_product", "keys_not_transposed", "transpose the keys"),
    named("scaled_dot_product", "softmax_over_queries", "softmax runs over the queries"),
    named("attention_head", "keys_from_query_map", "keys come from the query map"),
    named("attention_head", "values_from_key_map", "values come from the key map"),
    named("split_heads", "heads_left_behind_tokens", "swap axes 1 and 2"),
    named("split_heads", "merged_without_transpose", "without transposing back"),
    named("split_heads", "view_of_non_contiguous", "not contiguous"),
    named("split_heads", "view_without_transpose", "without transpose"),
    named("feed_forward", "linear_2_twice", "each applied once"),
    named("feed_forward", "no_activation", "no activation"),
    named("feed_forward", "relu", "ReLU instead of GELU"),
    named("layer_norm", "eps_outside_the_root", "after the square root"),
    named("layer_norm", "no_scale_and_shift", "are not applied"),
    named("layer_norm", "over_the_tokens", "normalized over the tokens"),
    named("layer_norm", "unbiased_variance", "unbiased"),
    named("embeddings", "layer_norm_twice", "applied twice"),
    named("embeddings", "no_layer_norm", "no layer norm"),
    named("embeddings", "positions_from_one", "start at 1"),
    named("embeddings", "token_ids_as_positions", "token ids are used as positions"),
    named("classifier_head", "every_token", "take the first token's state"),
    named("classifier_head", "last_token", "the last token is used"),
    named("classifier_head", "mean_pooling", "tokens are averaged"),
    named("causal_mask", "mask_after_softmax", "applied after the softmax"),
    named("causal_mask", "mask_ignored", "the mask is not applied"),
    named("causal_mask", "mask_multiplied", "multiplied by the mask"),
    named("causal_mask", "no_diagonal", "leaves out the diagonal"),
    named("causal_mask", "upper_triangle", "upper triangle (triu)"),
    named("cross_attention", "keys_not_transposed", "transpose the keys"),
    named("cross_attention", "padding_ignored", "padded source position"),
    named("cross_attention", "queries_from_the_encoder", "the queries come from the encoder"),
    named("cross_attention", "scaled_by_d", "divided by head_dim;"),
    named("cross_attention", "self_attention_instead", "the keys come from the decoder"),
    named("decoder_layer", "cross_attention_forgotten", "does not depend on the encoder output"),
    named("decoder_layer", "no_skip_connections", "skip connections are missing"),
    named("decoder_layer", "no_target_mask", "must get the target mask"),
    named("decoder_layer", "post_layer_norm", "post-layer-norm arrangement"),
    named("sinusoidal_positions", "halves_not_interleaved", "in two halves"),
    named("sinusoidal_positions", "i_instead_of_2i", "exponent uses i"),
    named("sinusoidal_positions", "sin_cos_swapped", "sines and cosines are swapped"),
    named("shift_right", "eos_into_padding", "<eos> moved into a padded position"),
    named("shift_right", "not_shifted", "not shifted"),
    named("shift_right", "pad_as_start_token", "pad id is used as the start token"),
    named("label_smoothed_loss", "no_smoothing", "ε is ignored"),
    named("label_smoothed_loss", "padding_counted", "padding positions are counted"),
    named("label_smoothed_loss", "smoothing_over_the_others", "spread over the V − 1 wrong tokens"),
    named("warmup_schedule", "max_instead_of_min", "max where the formula has min"),
    named("warmup_schedule", "no_model_factor", "d_model^(−1/2) is missing"),
    named("warmup_schedule", "wrong_warmup_power", "not step · warmup^(−1/2)"),
    named("beam_step", "best_token_of_each_beam", "each beam's best token was kept"),
    named("beam_step", "index_split_wrongly", "the beam is i / vocab and the token i % vocab"),
    named("beam_step", "scores_not_added", "scores so far are not added"),
    named("cached_attention", "appended_on_the_wrong_axis", "append along the positions axis"),
    named("cached_attention", "causal_mask_applied", "a causal mask is applied"),
    named("cached_attention", "new_position_not_attended", "does not attend to itself"),
    named("gpt_block", "future_filled_with_zero", "set to 0, not −∞"),
    named("gpt_block", "mask_after_softmax", "the mask comes after the softmax"),
    named("gpt_block", "no_mask", "there is no causal mask"),
    named("gpt_block", "no_residual", "skip connections are missing"),
    named("gpt_block", "not_scaled", "not scaled"),
    named("gpt_block", "past_masked", "when only later positions changed"),
    named("gpt_block", "post_layer_norm", "post-layer-norm arrangement"),
    named("mean_pooling", "no_clamp", "gives NaN"),
    named("mean_pooling", "padding_averaged", "the padding is averaged in"),
    named("mean_pooling", "sequence_length", "divided by the sequence length"),
    named("mean_pooling", "wrong_axis", "pooled over the wrong axis"),
];

/// The grader's own ids, with what each means (the report's words): refusals before anything is
/// compiled, the compiler's verdicts, and the sandbox's limits.
pub const STOPS: &[(&str, &str)] = &[
    ("refused_hand_in", "the file was refused as handed in (a link, not a regular file, too large)"),
    ("refused_by_rules", "the file uses something its exercise does not allow (the stubs' rules)"),
    ("not_utf8", "the file is not UTF-8 text"),
    ("beyond_reading_limits", "the file nests deeper or runs longer than the grader reads (its bounds)"),
    ("does_not_compile", "the compiler found an error in the file"),
    ("compile_limit", "compiling it was stopped at a limit (time, memory, output size)"),
    ("timed_out", "the check ran out of time (an endless loop?)"),
    ("out_of_memory", "the code ran out of memory"),
    ("too_much_output", "the code printed more than allowed"),
    ("disk_limit", "the code wrote more to disk than allowed"),
    ("forbidden_call", "the code made a system call the sandbox forbids"),
    ("crashed", "the code crashed or ended in the middle of the check"),
];

/// The id of a failed check's message: the named mistake whose phrase it holds, a limit it names (the
/// memory or disk an in-process check ran out of), or [`UNNAMED`].
pub fn of_check(exercise: &str, message: &str) -> &'static str {
    NAMED
        .iter()
        .find(|n| n.exercise == exercise && message.contains(n.phrase))
        .map(|n| n.id)
        .or_else(|| limit_in(message))
        .unwrap_or(UNNAMED)
}

/// The id of a probe that stopped before the check finished, from the reason the grader gave.
pub fn of_stop(why: &str) -> &'static str {
    limit_in(why).unwrap_or("crashed")
}

fn limit_in(words: &str) -> Option<&'static str> {
    if words.starts_with("timed out after") {
        Some("timed_out")
    } else if words.contains("ran out of its") {
        Some("out_of_memory")
    } else if words.starts_with("printed more than") {
        Some("too_much_output")
    } else if words.starts_with("wrote more than") || words.starts_with("wrote a file larger") {
        Some("disk_limit")
    } else if words.contains("which the sandbox forbids") || words.contains("system call the sandbox forbids") {
        Some("forbidden_call")
    } else {
        None
    }
}

/// What an id means, in words: the grader's own from [`STOPS`], a named mistake as its id reads
/// (`unbiased_variance` → "unbiased variance").
pub fn words(id: &str) -> String {
    match STOPS.iter().find(|(stop, _)| *stop == id) {
        Some((_, words)) => words.to_string(),
        None if id == UNNAMED => "a failure no named mistake covers".to_string(),
        None => id.replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_mistake_is_of_a_registered_exercise_with_a_distinct_id() {
        let mut seen = std::collections::BTreeSet::new();
        for n in NAMED {
            assert!(crate::find(n.exercise).is_ok(), "{}", n.exercise);
            assert!(seen.insert((n.exercise, n.id)), "{}/{} twice", n.exercise, n.id);
            assert!(!STOPS.iter().any(|(s, _)| *s == n.id) && n.id != UNNAMED, "{} is the grader's", n.id);
        }
    }

    #[test]
    fn stops_are_told_apart_and_anything_else_is_a_crash() {
        for (why, id) in [
            ("timed out after 20 s (an endless loop?)", "timed_out"),
            ("ran out of its 2 GiB of memory", "out_of_memory"),
            ("printed more than 64 KiB (stdout and stderr together) and was stopped: print less", "too_much_output"),
            ("wrote a file larger than 64 MiB and was stopped", "disk_limit"),
            ("tried to start a process (system call 57), which the sandbox forbids", "forbidden_call"),
            ("crashed (segmentation fault)", "crashed"),
            ("overflowed its stack (endless recursion?)", "crashed"),
        ] {
            assert_eq!(of_stop(why), id, "{why}");
        }
        assert_eq!(of_check("layer_norm", "output: differs from the expected values by up to 1"), UNNAMED);
        assert_eq!(of_check("causal_mask", "output: the variance is the unbiased one"), UNNAMED);
        assert_eq!(of_check("layer_norm", "output: the variance is the unbiased one"), "unbiased_variance");
    }
}
