//! The embedded backend against the real default model (SmolLM2-135M-Instruct, Q4_1): chat
//! template rendering, tokenization, determinism with a seed, logprobs equal to the model's
//! own, sampling limits, the context length, and the async seam (not blocking the runtime,
//! cancelled when dropped). Skipped with a message when the model file is absent.

use crate::common;

use std::time::{Duration, Instant};

use swerve_llm::{Message, Model, ModelError, ModelInput, ModelRequest, Sampling};

fn sampling(temperature: f64, max_tokens: u32, seed: Option<u64>) -> Sampling {
    Sampling {
        temperature: Some(temperature),
        max_tokens: Some(max_tokens),
        seed,
        ..Sampling::default()
    }
}

/// The rendering of the model's template by Jinja2 as transformers sets it up
/// (`trim_blocks`, `lstrip_blocks`), written down from Python.
#[test]
fn the_chat_template_from_the_metadata_renders_as_transformers_does() {
    let Some(model) = common::model() else { return };
    let user_only = model.render(&[Message::user("What is 2+2?")], &[]).unwrap();
    assert_eq!(
        user_only,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging \
         Face<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    );
    let conversation = [
        Message::system("You fix bugs."),
        Message::user("Fix it.\nPlease."),
        Message::assistant("<function=finish>\n</function>"),
        Message::user("Done? ünïcode ✓"),
    ];
    assert_eq!(
        model.render(&conversation, &[]).unwrap(),
        "<|im_start|>system\nYou fix bugs.<|im_end|>\n<|im_start|>user\nFix it.\nPlease.<|im_end|>\n\
         <|im_start|>assistant\n<function=finish>\n</function><|im_end|>\n<|im_start|>user\n\
         Done? ünïcode ✓<|im_end|>\n<|im_start|>assistant\n"
    );
    // A chat prompt is the rendering tokenized as it is: the template's special tokens are
    // single tokens (<|im_start|> = 1, <|im_end|> = 2), and no BOS is added.
    let input = ModelInput::Chat {
        messages: vec![Message::user("What is 2+2?")],
        tools: Vec::new(),
    };
    let ids = model.prompt_tokens(&input).unwrap();
    assert_eq!(ids[0], 1);
    assert_eq!(ids.iter().filter(|&&id| id == 1).count(), 3);
    assert_eq!(ids.iter().filter(|&&id| id == 2).count(), 2);
    assert_eq!(model.tokenizer().decode(&ids, false).unwrap(), user_only);
}

#[test]
fn the_tokenizer_from_the_metadata_round_trips_and_knows_its_tokens() {
    let Some(model) = common::model() else { return };
    let tokenizer = model.tokenizer();
    assert_eq!(tokenizer.vocab_size(), 49152);
    for (text, id) in [("<|endoftext|>", 0), ("<|im_start|>", 1), ("<|im_end|>", 2)] {
        assert_eq!(tokenizer.token_to_id(text), Some(id));
        assert_eq!(tokenizer.encode(text, false).unwrap(), vec![id]);
    }
    // SmolLM's pre-tokenizer splits digits one by one, then GPT-2's byte-level rules apply
    // (`Ġ` is a space). Ids as the GGUF vocabulary numbers them.
    assert_eq!(
        tokenizer.encode("What is 2+2?", false).unwrap(),
        vec![1780, 314, 216, 34, 27, 34, 47]
    );
    assert_eq!(tokenizer.id_to_token(314).as_deref(), Some("Ġis"));
    let numbers = tokenizer.encode("12345", false).unwrap();
    assert_eq!(numbers.len(), 5, "{numbers:?}");
    for text in [
        "def f(x):\n\treturn x ** 2  # square\n",
        "Ünïcödé — 日本語のテキスト, emoji 🦀🚀, and \u{1F}control\r\n",
        "  leading and trailing spaces  ",
        "<|im_start|>user\nhi<|im_end|>",
        "",
    ] {
        let ids = tokenizer.encode(text, false).unwrap();
        assert_eq!(tokenizer.decode(&ids, false).unwrap(), text, "{ids:?}");
    }
    // Decoding for the reply drops special tokens.
    let ids = tokenizer.encode("hi<|im_end|>", false).unwrap();
    assert_eq!(tokenizer.decode(&ids, true).unwrap(), "hi");
}

#[test]
fn a_seed_gives_the_same_tokens_and_logprobs_every_time() {
    let Some(model) = common::model() else { return };
    let runtime = common::runtime();
    let ask = |temperature: f64, seed: Option<u64>| {
        let request = ModelRequest::chat(vec![Message::user("Write a short poem about rust.")])
            .with_sampling(sampling(temperature, 24, seed))
            .capturing_tokens();
        runtime.block_on(model.complete(&request)).unwrap()
    };
    let first = ask(1.0, Some(7));
    let again = ask(1.0, Some(7));
    assert_eq!(first.completion_token_ids, again.completion_token_ids);
    assert_eq!(first.logprobs, again.logprobs);
    assert_eq!(first.content, again.content);
    let other = ask(1.0, Some(8));
    assert_ne!(first.completion_token_ids, other.completion_token_ids);
    // Greedy decoding needs no seed to repeat itself.
    assert_eq!(
        ask(0.0, None).completion_token_ids,
        ask(0.0, None).completion_token_ids
    );
}

/// Each returned logprob is the log-softmax of the model's raw logits for the chosen token
/// (not of the tempered or truncated distribution it was drawn from): scoring the same
/// tokens with them forced gives the same numbers, for greedy and sampled replies. And the
/// cache holds what a cache-free run computes: each greedy token, generated again from a
/// fresh run of the whole prefix, is the same token with the same logprob up to rounding (a
/// batch of prompt tokens sums in another order than a single token).
#[test]
fn each_logprob_is_the_models_own_for_the_chosen_token() {
    let Some(model) = common::model() else { return };
    let runtime = common::runtime();
    for (temperature, seed) in [(0.0, None), (1.0, Some(3)), (0.7, Some(11))] {
        let mut chosen = sampling(temperature, 12, seed);
        chosen.top_p = Some(0.9);
        let request = ModelRequest::chat(vec![Message::user("Name three colors.")])
            .with_sampling(chosen)
            .capturing_tokens();
        let response = runtime.block_on(model.complete(&request)).unwrap();
        let prompt = response.prompt_token_ids.unwrap();
        let tokens = response.completion_token_ids.unwrap();
        let logprobs = response.logprobs.unwrap();
        assert_eq!(tokens.len(), logprobs.len());
        assert!(!tokens.is_empty());
        assert!(
            logprobs.iter().all(|&logprob| logprob <= 0.0),
            "{logprobs:?}"
        );
        assert_eq!(
            model.score(&prompt, &tokens).unwrap(),
            logprobs,
            "T={temperature}"
        );
        if temperature > 0.0 {
            continue;
        }
        let once = sampling(0.0, 1, None);
        let mut worst = 0f64;
        for index in 0..tokens.len() {
            let prefix = [&prompt[..], &tokens[..index]].concat();
            let fresh = model.generate(&prefix, &once, false).unwrap();
            assert_eq!(fresh.tokens, [tokens[index]], "token {index}");
            worst = worst.max((fresh.logprobs[0] - logprobs[index]).abs());
        }
        eprintln!("largest difference from a cache-free run: {worst:e}");
        assert!(worst < 1e-3, "{worst}");
    }
}

#[test]
fn max_tokens_stop_strings_and_usage() {
    let Some(model) = common::model() else { return };
    let runtime = common::runtime();
    let messages = vec![Message::user(
        "Count from one to ten in words, separated by spaces.",
    )];
    let request = ModelRequest::chat(messages.clone())
        .with_sampling(sampling(0.0, 3, None))
        .capturing_tokens();
    let response = runtime.block_on(model.complete(&request)).unwrap();
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
    assert_eq!(response.usage.completion_tokens, 3);
    let prompt = response.prompt_token_ids.as_ref().unwrap();
    assert_eq!(response.usage.prompt_tokens, prompt.len() as u64);
    assert_eq!(response.attempts, 1);
    assert_eq!(response.cost, 0.0);

    // Greedy, the reply starts the same way; a stop string cuts it before the string.
    let full =
        runtime
            .block_on(model.complete(
                &ModelRequest::chat(messages.clone()).with_sampling(sampling(0.0, 40, None)),
            ))
            .unwrap();
    assert!(full.prompt_token_ids.is_none() && full.logprobs.is_none());
    let text = &full.content;
    let middle = (text.len() / 2..text.len())
        .find(|&at| text.is_char_boundary(at) && text.is_char_boundary(at + 2))
        .unwrap();
    let stop = text[middle..middle + 2].to_owned();
    let mut stopping = sampling(0.0, 40, None);
    stopping.stop = Some(vec![stop.clone()]);
    let cut = runtime
        .block_on(model.complete(&ModelRequest::chat(messages).with_sampling(stopping)))
        .unwrap();
    assert_eq!(cut.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        cut.content,
        full.content[..full.content.find(&stop).unwrap()]
    );
}

#[test]
fn a_prompt_beyond_the_context_is_a_context_length_error() {
    let Some(model) = common::model() else { return };
    let runtime = common::runtime();
    assert_eq!(model.info().context_length, 4096);
    let long = "word ".repeat(5000);
    let request = ModelRequest::chat(vec![Message::user(long)]);
    let error = runtime.block_on(model.complete(&request)).unwrap_err();
    let ModelError::ContextLength { detail } = &error else {
        panic!("expected a context-length error, got {error:?}");
    };
    assert!(detail.contains("4096"), "{detail}");
    // A prompt that fits, with more new tokens asked for than are left, fails the same way.
    let request = ModelRequest::prompt("Hello").with_sampling(sampling(0.0, 5000, None));
    let error = runtime.block_on(model.complete(&request)).unwrap_err();
    assert!(
        matches!(error, ModelError::ContextLength { .. }),
        "{error:?}"
    );
    // Bad sampling values are configuration errors, not panics.
    let mut bad = sampling(-1.0, 5, None);
    let error = runtime
        .block_on(model.complete(&ModelRequest::prompt("Hi").with_sampling(bad.clone())))
        .unwrap_err();
    assert!(error.to_string().contains("temperature"), "{error}");
    bad.temperature = Some(1.0);
    bad.top_p = Some(0.0);
    let error = runtime
        .block_on(model.complete(&ModelRequest::prompt("Hi").with_sampling(bad)))
        .unwrap_err();
    assert!(error.to_string().contains("top_p"), "{error}");
    let error = runtime
        .block_on(model.complete(&ModelRequest::prompt("")))
        .unwrap_err();
    assert!(error.to_string().contains("empty"), "{error}");
}

/// Generation runs on the blocking pool: a single-threaded runtime keeps ticking while the
/// model works. Dropping the call's future stops the generation, so the next call does not
/// wait for it.
#[test]
fn calls_leave_the_runtime_free_and_stop_when_dropped() {
    let Some(model) = common::model() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ticks = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counter = ticks.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let request =
            ModelRequest::prompt("Once upon a time").with_sampling(sampling(0.0, 64, None));
        let started = Instant::now();
        model.complete(&request).await.unwrap();
        let took = started.elapsed();
        ticker.abort();
        let ticks = ticks.load(std::sync::atomic::Ordering::Relaxed);
        assert!(took > Duration::from_millis(50), "64 tokens in {took:?}");
        assert!(
            ticks >= 3,
            "the runtime ticked {ticks} times in {took:?} of generation"
        );

        let long = ModelRequest::prompt("Write a very long story about a dragon.")
            .with_sampling(sampling(1.0, 4000, Some(1)));
        let cut_short =
            tokio::time::timeout(Duration::from_millis(300), model.complete(&long)).await;
        assert!(cut_short.is_err(), "4000 tokens took under 300 ms");
        let started = Instant::now();
        let quick = ModelRequest::prompt("Hello").with_sampling(sampling(0.0, 2, None));
        model.complete(&quick).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the next call waited {:?} for the dropped one",
            started.elapsed()
        );
    });
}
