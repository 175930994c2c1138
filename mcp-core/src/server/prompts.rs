//! Checking a `prompts/get` before the handler runs

use std::collections::BTreeMap;

use super::catalog::Catalog;
use crate::jsonrpc::{ErrorObject, code};
use crate::schema::Prompt;

impl Catalog {
    /// Checks a `prompts/get`: the prompt exists and every argument it marks `required` is
    /// given (arguments it does not declare are let through)
    ///
    /// # Errors
    /// -32602 `Unknown prompt: <name>`, or -32602 `Missing required argument <arg> for
    /// prompt <name>` naming the first missing one in declaration order.
    pub fn check_prompt_args(
        &self,
        name: &str,
        arguments: Option<&BTreeMap<String, String>>,
    ) -> Result<&Prompt, ErrorObject> {
        let prompt = self.prompts.get(name).ok_or_else(|| {
            ErrorObject::new(code::INVALID_PARAMS, format!("Unknown prompt: {name}"))
        })?;
        let missing = prompt.arguments.iter().flatten().find(|arg| {
            arg.required == Some(true)
                && !arguments.is_some_and(|given| given.contains_key(&arg.name))
        });
        if let Some(arg) = missing {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Missing required argument {} for prompt {name}", arg.name),
            ));
        }
        Ok(prompt)
    }
}
