//! The messages a world model is asked with: a context rendered in the chosen
//! [`PromptStyle`], SWE-World's own templates ([`super::paper`]) or swerve's. Choosing here,
//! above both, keeps the contexts and the paper's templates from importing each other.

use swerve_llm::Message;

use super::PromptStyle;
use super::evaluation::SwrContext;
use super::paper::{self, PAPER_SWR_SYSTEM, PAPER_SWT_SYSTEM};
use super::prompt::{SWR_SYSTEM_PROMPT, SWT_SYSTEM_PROMPT};
use super::transition::TransitionContext;

impl TransitionContext {
    /// The user message.
    pub fn user_prompt(&self) -> String {
        match self.prompts {
            PromptStyle::Paper => paper::swt_user(self),
            PromptStyle::Swerve => self.swerve_user_prompt(),
        }
    }

    /// The system and user messages for the transition model.
    pub fn messages(&self) -> Vec<Message> {
        vec![
            Message::system(match self.prompts {
                PromptStyle::Paper => PAPER_SWT_SYSTEM,
                PromptStyle::Swerve => SWT_SYSTEM_PROMPT,
            }),
            Message::user(self.user_prompt()),
        ]
    }
}

impl SwrContext {
    /// The user message.
    pub fn user_prompt(&self) -> String {
        match self.prompts {
            PromptStyle::Paper => paper::swr_user(self),
            PromptStyle::Swerve => self.swerve_user_prompt(),
        }
    }

    /// The system and user messages for the reward model.
    pub fn messages(&self) -> Vec<Message> {
        vec![
            Message::system(match self.prompts {
                PromptStyle::Paper => PAPER_SWR_SYSTEM,
                PromptStyle::Swerve => SWR_SYSTEM_PROMPT,
            }),
            Message::user(self.user_prompt()),
        ]
    }
}
