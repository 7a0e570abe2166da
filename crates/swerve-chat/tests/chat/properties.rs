//! Properties over arbitrary input: rendering and counting never panic, with the real
//! templates and with arbitrary template sources, and a template's own failure (such as
//! `raise_exception`) is an error that names the template.

use crate::common;

use proptest::prelude::*;
use swerve_chat::{ChatTemplate, Error, RenderOptions};
use swerve_core::trajectory::{ChatToolCall, Content, Message, Role};

use common::{MODELS, model};

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        Just(Role::System),
        Just(Role::Developer),
        Just(Role::User),
        Just(Role::Assistant),
        Just(Role::Tool),
    ]
}

/// Arguments as models write them: JSON objects, other JSON, or broken text.
fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(("\\PC{0,8}", any::<i64>()), 0..4).prop_map(|pairs| {
            let map: serde_json::Map<_, _> = pairs
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::from(v)))
                .collect();
            serde_json::Value::Object(map).to_string()
        }),
        any::<f64>().prop_map(|x| serde_json::json!([x, null, "s"]).to_string()),
        any::<String>(),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    (
        role(),
        prop::option::of(any::<String>()),
        prop::option::of(any::<String>()),
        prop::collection::vec(("\\PC{0,6}", "\\PC{0,12}", arguments()), 0..3),
        prop::option::of("\\PC{0,6}"),
    )
        .prop_map(
            |(role, content, reasoning_content, calls, tool_call_id)| Message {
                role,
                content: content.map(Content::Text),
                reasoning_content,
                tool_calls: calls
                    .into_iter()
                    .map(|(id, name, args)| ChatToolCall::new(id, name, args))
                    .collect(),
                tool_call_id,
                name: None,
            },
        )
}

fn options() -> impl Strategy<Value = RenderOptions> {
    (
        any::<bool>(),
        prop::option::of(any::<bool>()),
        any::<bool>(),
    )
        .prop_map(|(generation, thinking, tools)| {
            let mut options = RenderOptions::default().generation_prompt(generation);
            if let Some(thinking) = thinking {
                options = options.variable("enable_thinking", thinking);
            }
            if tools {
                options = options.tools(vec![
                    serde_json::json!({"type": "function", "function": {"name": "f"}}),
                ]);
            }
            options
        })
}

/// Pieces of Jinja, to build sources that get past the parser now and then.
fn template_source() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{% for m in messages %}".to_owned()),
        Just("{% endfor %}".to_owned()),
        Just("{%- if m.role == 'user' %}".to_owned()),
        Just("{% endif -%}".to_owned()),
        Just("{{ m.content | tojson(indent=2) }}".to_owned()),
        Just("{{ messages[0]['content'].strip().split('\\n') }}".to_owned()),
        Just("{{ raise_exception('bad input') }}".to_owned()),
        Just("{% generation %}".to_owned()),
        Just("{% endgeneration %}".to_owned()),
        Just("{{ tools | tojson }}".to_owned()),
        Just("{{ strftime_now('%Y') }}".to_owned()),
        Just("{%".to_owned()),
        Just("}}".to_owned()),
        "\\PC{0,10}",
    ];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn rendering_and_counting_never_panic(
        messages in prop::collection::vec(message(), 0..5),
        options in options(),
    ) {
        for name in MODELS {
            let model = model(name);
            match model.render(&messages, &options) {
                Ok(text) => {
                    let ids = model.encode(&messages, &options).unwrap();
                    prop_assert_eq!(ids.len(), model.count(&messages, &options).unwrap());
                    prop_assert_eq!(&ids, &model.tokenizer().encode(&text, false).unwrap());
                    prop_assert!(model.tokenizer().decode(&ids, false).is_ok());
                }
                Err(err) => {
                    prop_assert!(matches!(err, Error::Template { .. }), "{}", err);
                    prop_assert!(err.to_string().contains("tokenizer_config.json"), "{}", err);
                }
            }
        }
    }

    #[test]
    fn plain_conversations_always_render(
        turns in prop::collection::vec(any::<String>(), 1..4),
        generation in any::<bool>(),
    ) {
        let messages: Vec<Message> = turns
            .iter()
            .enumerate()
            .map(|(i, text)| if i % 2 == 0 { Message::user(text.clone()) } else { Message::assistant(text.clone()) })
            .collect();
        let options = RenderOptions::default().generation_prompt(generation);
        for name in MODELS {
            let text = model(name).render(&messages, &options).unwrap();
            // Llama's template trims each message; Qwen3's keeps a user message as it is.
            prop_assert!(text.contains(turns[0].trim()));
            prop_assert!(model(name).count(&messages, &options).unwrap() > 0);
        }
    }

    #[test]
    fn arbitrary_templates_fail_with_their_name(source in template_source(), messages in prop::collection::vec(message(), 0..3)) {
        match ChatTemplate::from_source("fuzz.jinja", source) {
            Ok(template) => {
                if let Err(err) = template.render(&messages, &RenderOptions::default()) {
                    prop_assert!(err.to_string().starts_with("chat template fuzz.jinja: "), "{}", err);
                }
            }
            Err(err) => prop_assert!(err.to_string().starts_with("chat template fuzz.jinja: "), "{}", err),
        }
    }

    #[test]
    fn raise_exception_is_an_error_naming_the_template(message in any::<String>()) {
        let template = ChatTemplate::from_source("guard.jinja", "{{ raise_exception(reason) }}").unwrap();
        let err = template
            .render(&[], &RenderOptions::default().variable("reason", message.clone()))
            .unwrap_err();
        let named_guard = matches!(&err, Error::Template { template, .. } if template == "guard.jinja");
        prop_assert!(named_guard, "{}", err);
        prop_assert!(err.to_string().contains(&message), "{}", err);
    }

    #[test]
    fn decoding_arbitrary_ids_never_panics(ids in prop::collection::vec(any::<u32>(), 0..32), skip in any::<bool>()) {
        for name in MODELS {
            let _ = model(name).tokenizer().decode(&ids, skip);
        }
    }
}
