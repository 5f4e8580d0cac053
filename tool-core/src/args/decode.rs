//! The arguments stage's last step: from the checked JSON object to the typed
//! value of each parameter, inside the generated call shim ([`Invocation`]:
//! hidden and injected values, required and optional parameters,
//! `#[arg(flatten)]` structs, the unknown-parameter check in `finish`). The
//! stage's first steps (text to object, repairs, strict mode's `null`s) are
//! `repair.rs` and `normalize.rs`; every message comes from `messages.rs`.
#![allow(
    clippy::result_large_err,
    reason = "the Err of argument extraction is the call's final ToolResult, returned as is on a rare path"
)]

use std::any::Any;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::args::messages;
use crate::args::schema::ArgLayout;
use crate::governance::secrets;
use crate::result::{ErrorKind, ToolResult};
use crate::tool::context::{State, ToolContext};
use crate::tool::statics::{InjectMode, Invocation, ParamRole, StaticParam, StaticTool};

/// Notes gathered while extracting arguments, for the generated shim's
/// `complete`. None today: the pipeline records what it changed itself (kept
/// so generated code stays stable).
#[derive(Debug, Default)]
pub struct Notes {}

impl Invocation {
    pub(crate) fn new(
        def: &'static StaticTool,
        layout: Arc<ArgLayout>,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Self {
        Self {
            def,
            layout,
            args,
            ctx,
            receiver: None,
            checked: None,
        }
    }

    /// The same call, for a `#[toolset]` method bound to `receiver`.
    pub(crate) fn with_receiver(mut self, receiver: Arc<dyn Any + Send + Sync>) -> Self {
        self.receiver = Some(receiver);
        self
    }

    /// The instance a `#[toolset]` method's tool is bound to.
    ///
    /// # Errors
    /// A `failed` result when the tool is not bound to a `T` (a bug in the
    /// generated code; never seen by a program that compiles).
    pub fn receiver<T: Any + Send + Sync>(&self) -> Result<Arc<T>, ToolResult> {
        self.receiver
            .clone()
            .and_then(|r| r.downcast::<T>().ok())
            .ok_or_else(|| {
                ToolResult::failed(format!(
                    "Tool `{}` is a method of `{}` but is not bound to one",
                    self.def.name,
                    std::any::type_name::<T>()
                ))
            })
    }

    fn param(&self, idx: usize) -> &'static StaticParam {
        &self.def.params[idx]
    }

    /// The raw JSON for parameter `idx` after the hidden/inject rules, or `None` when absent.
    fn raw(&mut self, idx: usize) -> Option<Value> {
        let p = self.param(idx);
        let injected = p
            .inject
            .and_then(|rule| self.ctx.lookup(rule.key).cloned().map(|v| (rule.mode, v)));
        if p.role == ParamRole::Hidden {
            if let Some(v) = self.ctx.value(p.name).filter(|v| !v.is_null()) {
                return Some(v.clone());
            }
            return injected.map(|(_, v)| v);
        }
        let sent = self.args.remove(p.name).filter(|v| !v.is_null());
        match (injected, sent) {
            (None, sent) => sent,
            (Some((_, framework)), None) => Some(framework),
            (Some((InjectMode::Default, _)), Some(sent)) => Some(sent),
            (Some((InjectMode::Merge, framework)), Some(sent)) => {
                Some(merge_values(framework, sent))
            }
        }
    }

    /// The value of parameter `idx`, deserialised; `Ok(None)` when absent or `null`.
    ///
    /// # Errors
    /// An `invalid_arguments` result naming the parameter, the expected type and what was sent.
    pub fn value<T: DeserializeOwned>(&mut self, idx: usize) -> Result<Option<T>, ToolResult> {
        let Some(raw) = self.raw(idx) else {
            return Ok(None);
        };
        let p = self.param(idx);
        if let Ok(v) = T::deserialize(&raw) {
            return Ok(Some(v));
        }
        // Again, on this rare path only, for the path of the part refused.
        match serde_path_to_error::deserialize::<_, T>(&raw) {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                let steps = steps_of(e.path());
                let detail = e.into_inner().to_string();
                Err(self.bad_value(p.name, &p.shown_type(), raw, &steps, detail))
            }
        }
    }

    /// [`bad_value`] for this call.
    fn bad_value(
        &self,
        name: &str,
        rust_type: &str,
        sent: Value,
        steps: &[messages::Step],
        detail: String,
    ) -> ToolResult {
        bad_value(
            self.def.name,
            &self.layout,
            &self.ctx,
            name,
            rust_type,
            sent,
            steps,
            detail,
        )
    }

    /// The names sent that are no parameter of the tool (the schema's
    /// properties, flattened fields included), for the missing-parameter message.
    fn unknown_names(&self) -> Vec<&str> {
        unknown_names(&self.layout, &self.args)
    }

    /// The value of the `#[arg(flatten)]` parameter `idx`: [`flattened`] on
    /// this call's arguments.
    ///
    /// # Errors
    /// As [`flattened`].
    pub fn flattened<T: DeserializeOwned>(&mut self, idx: usize) -> Result<T, ToolResult> {
        let layout = Arc::clone(&self.layout);
        flattened(
            self.def.name,
            &layout,
            idx,
            self.param(idx),
            &mut self.args,
            &self.ctx,
        )
    }

    /// The value of a required parameter.
    ///
    /// # Errors
    /// As [`value`](Self::value), plus a missing-parameter error (`invalid_arguments`
    /// for visible parameters, `missing_context` for hidden ones).
    pub fn required<T: DeserializeOwned>(&mut self, idx: usize) -> Result<T, ToolResult> {
        if let Some(v) = self.value(idx)? {
            return Ok(v);
        }
        let p = self.param(idx);
        if p.role == ParamRole::Hidden {
            return Err(missing_hidden(self.def.name, p));
        }
        let expected = messages::expected(&self.layout.types, p.name, &p.shown_type());
        Err(messages::missing_parameter(
            self.def.name,
            p.name,
            &expected,
            &self.unknown_names(),
        ))
    }

    /// The typed state for a `State<T>` parameter.
    ///
    /// # Errors
    /// A `missing_context` result naming the type when the context holds no `T`.
    pub fn state<T: Send + Sync + 'static>(&self, idx: usize) -> Result<State<T>, ToolResult> {
        self.ctx.state::<T>().ok_or_else(|| {
            ToolResult::error(
                ErrorKind::MissingContext,
                format!(
                    "Tool `{}` needs application state of type `{}` for parameter `{}`, but the context holds none (add it with ToolContext::with_state).",
                    self.def.name,
                    std::any::type_name::<T>(),
                    self.param(idx).rust_name
                ),
            )
        })
    }

    /// The call's context.
    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    /// Checks that no argument is left over (unknown parameters are refused)
    /// and returns the context and the notes to attach to the result with [`complete`].
    ///
    /// # Errors
    /// An `invalid_arguments` result listing the unknown names and the valid ones.
    pub fn finish(self) -> Result<(ToolContext, Notes), ToolResult> {
        no_unknown(self.def.name, &self.layout, &self.args)?;
        if let Some(passed) = &self.checked {
            // An argument check: every argument decoded; the shim stops here
            // (this result is never shown: the check reads the flag).
            passed.store(true, std::sync::atomic::Ordering::SeqCst);
            return Err(ToolResult::error(
                ErrorKind::InvalidArguments,
                "arguments checked; the tool was not run",
            ));
        }
        Ok((self.ctx, Notes {}))
    }
}

/// The `missing_context` error of a required hidden parameter `p` of `tool`
/// that neither the context value of its name nor its inject rule supplies.
fn missing_hidden(tool: &str, p: &StaticParam) -> ToolResult {
    ToolResult::error(
        ErrorKind::MissingContext,
        format!(
            "Tool `{tool}` needs the hidden parameter `{}`, which the application did not supply (no context value `{}`{}).",
            p.name,
            p.name,
            p.inject
                .map(|r| format!(" and nothing at `{}`", r.key))
                .unwrap_or_default()
        ),
    )
}

/// What the application supplies to a call of the `#[tool]` fn with
/// `params`, by the rules the call shim applies ([`Invocation`]'s `raw`),
/// worked out before the call: each hidden parameter's value (the context
/// value of its name, else its inject rule's), and each visible parameter's
/// `inject_params` value where it takes effect (the model sent nothing, or
/// `mode = "merge"`: the merged value). `args` are the model's, after the
/// hidden ones were stripped. Returned in parameter order.
///
/// # Errors
/// The `missing_context` error the call would end with, when a required
/// hidden parameter has no value: so the pipeline refuses the call before
/// anyone is asked to approve it.
pub(crate) fn resolve_injected(
    tool: &str,
    params: &[StaticParam],
    args: &Map<String, Value>,
    ctx: &ToolContext,
) -> Result<Map<String, Value>, ToolResult> {
    let mut injected = Map::new();
    for p in params {
        let framework = p
            .inject
            .and_then(|rule| ctx.lookup(rule.key).map(|v| (rule.mode, v)));
        match p.role {
            ParamRole::Hidden => {
                let value = ctx
                    .value(p.name)
                    .filter(|v| !v.is_null())
                    .or(framework.map(|(_, v)| v));
                match value {
                    Some(v) => {
                        injected.insert(p.name.to_owned(), v.clone());
                    }
                    None if !p.optional => return Err(missing_hidden(tool, p)),
                    // Its `#[arg(default)]`, which the fn gets.
                    None => {
                        if let Some(default) = p.default {
                            injected.insert(p.name.to_owned(), default());
                        }
                    }
                }
            }
            ParamRole::Visible => {
                let sent = args.get(p.name).filter(|v| !v.is_null());
                let value = match (framework, sent) {
                    (None, _) | (Some((InjectMode::Default, _)), Some(_)) => None,
                    (Some((_, framework)), None) => Some(framework.clone()),
                    (Some((InjectMode::Merge, framework)), Some(sent)) => {
                        Some(merge_values(framework.clone(), sent.clone()))
                    }
                };
                if let Some(v) = value {
                    injected.insert(p.name.to_owned(), v);
                }
            }
            ParamRole::Context | ParamRole::State | ParamRole::Flattened => {}
        }
    }
    Ok(injected)
}

/// The names in `args` that are no parameter of the tool (the schema's
/// properties, flattened fields included), for the missing-parameter message.
fn unknown_names<'a>(layout: &ArgLayout, args: &'a Map<String, Value>) -> Vec<&'a str> {
    args.keys()
        .map(String::as_str)
        .filter(|k| !layout.types.has(k))
        .collect()
}

/// The unknown-parameter check: nothing may be left in `args` once every
/// parameter took its value.
///
/// # Errors
/// An `invalid_arguments` result listing the unknown names and the valid ones.
pub(crate) fn no_unknown(
    tool: &str,
    layout: &ArgLayout,
    args: &Map<String, Value>,
) -> Result<(), ToolResult> {
    if args.is_empty() {
        return Ok(());
    }
    // The schema's properties: visible parameters and flattened fields, in order.
    let valid: Vec<&str> = layout
        .types
        .parameters()
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let unknown: Vec<&str> = args.keys().map(String::as_str).collect();
    Err(messages::unknown_parameters(tool, &unknown, &valid))
}

/// `sent` and `detail` with the call's secret values masked.
fn masked(ctx: &ToolContext, mut sent: Value, mut detail: String) -> (Value, String) {
    if let Some(masker) = secrets::masker_for(ctx.secrets(), &[]) {
        masker.mask_value(&mut sent);
        masker.mask_string(&mut detail);
    }
    (sent, detail)
}

/// The invalid-value error for parameter `name` of `tool` (of Rust type
/// `rust_type`, for the message) that received `sent`, with secrets
/// masked: they were substituted before this point, so they are masked
/// before the message quotes (and cuts) the value, and no prefix survives.
///
/// `steps` is where inside the value serde refused it (none: the value
/// as a whole); the message then names that path, what the schema
/// expects there and the part of the value found there.
#[allow(
    clippy::too_many_arguments,
    reason = "one message from the parts of one refusal; a struct would only rename them"
)]
fn bad_value(
    tool: &str,
    layout: &ArgLayout,
    ctx: &ToolContext,
    name: &str,
    rust_type: &str,
    sent: Value,
    steps: &[messages::Step],
    detail: String,
) -> ToolResult {
    if !steps.is_empty()
        && let Some(part) = messages::value_at(&sent, steps)
    {
        let (part, detail) = masked(ctx, part.clone(), detail);
        let expected = messages::expected_at(&layout.types, name, steps);
        return messages::bad_nested(
            tool,
            name,
            &messages::path_text(name, steps),
            expected.as_deref(),
            &part,
            &detail,
        );
    }
    let (sent, detail) = masked(ctx, sent, detail);
    let expected = messages::expected_for(&layout.types, name, rust_type, &sent);
    messages::bad_parameter(tool, name, &expected, &sent, &detail)
}

/// The value of the `#[arg(flatten)]` parameter `p` (index `idx` of
/// `layout`) of `tool`: its struct deserialised from the top-level
/// arguments that are its fields (the schema's names, taken out of `args`;
/// `null` counts as absent, as for any parameter). The one decoder of
/// flattened structs: the macro's shim and [`Tool::typed`](crate::Tool::typed)
/// both call it.
///
/// # Errors
/// An `invalid_arguments` result naming the field: a missing-parameter
/// error when a field the struct's schema requires is absent, an
/// invalid-value error naming the field, its expected JSON type and what
/// was sent when it does not deserialise (serde's error path says which
/// field), else one naming the struct with serde's message.
pub(crate) fn flattened<T: DeserializeOwned>(
    tool: &str,
    layout: &ArgLayout,
    idx: usize,
    p: &StaticParam,
    args: &mut Map<String, Value>,
    ctx: &ToolContext,
) -> Result<T, ToolResult> {
    let fields = layout.fields_of(idx);
    let mut object = Map::new();
    for field in fields {
        if let Some(v) = args.remove(&field.name).filter(|v| !v.is_null()) {
            object.insert(field.name.clone(), v);
        }
    }
    if let Some(missing) = fields
        .iter()
        .find(|f| f.required && !object.contains_key(&f.name))
    {
        let expected =
            messages::expected(&layout.types, &missing.name, &field_type(p, &missing.name));
        return Err(messages::missing_parameter(
            tool,
            &missing.name,
            &expected,
            &unknown_names(layout, args),
        ));
    }
    let object = Value::Object(object);
    match serde_path_to_error::deserialize::<_, T>(&object) {
        Ok(v) => Ok(v),
        Err(e) => {
            let steps = steps_of(e.path());
            let detail = e.into_inner().to_string();
            let field = match steps.split_first() {
                Some((messages::Step::Key(key), rest)) => {
                    object.get(key).cloned().map(|sent| (key, sent, rest))
                }
                _ => None,
            };
            match field {
                Some((name, sent, rest)) => Err(bad_value(
                    tool,
                    layout,
                    ctx,
                    name,
                    &field_type(p, name),
                    sent,
                    rest,
                    detail,
                )),
                None => {
                    let (sent, detail) = masked(ctx, object, detail);
                    Err(messages::bad_fields(tool, &p.shown_type(), &sent, &detail))
                }
            }
        }
    }
}

/// How a message names the type of field `field` of the flattened
/// parameter `p`: `SearchArgs.limit` (the macro cannot see field types).
/// `serde_path_to_error`'s path as message steps, up to the first segment it
/// could not name.
fn steps_of(path: &serde_path_to_error::Path) -> Vec<messages::Step> {
    use serde_path_to_error::Segment;
    path.iter()
        .map_while(|segment| match segment {
            Segment::Map { key } => Some(messages::Step::Key(key.clone())),
            Segment::Enum { variant } => Some(messages::Step::Key(variant.clone())),
            Segment::Seq { index } => Some(messages::Step::Index(*index)),
            Segment::Unknown => None,
        })
        .collect()
}

fn field_type(p: &StaticParam, field: &str) -> String {
    format!("{}.{field}", p.shown_type())
}

/// Merges a framework value into a model value (see [`InjectMode::Merge`]).
/// Values of different shapes keep the model's value.
pub(crate) fn merge_values(framework: Value, sent: Value) -> Value {
    match (framework, sent) {
        (Value::Object(fw), Value::Object(mut model)) => {
            for (k, v) in fw {
                model.insert(k, v);
            }
            Value::Object(model)
        }
        (Value::Array(fw), Value::Array(model)) => {
            let mut out = fw;
            for item in model {
                if !out.contains(&item) {
                    out.push(item);
                }
            }
            Value::Array(out)
        }
        (_, sent) => sent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_maps_framework_wins_lists_dedup() {
        assert_eq!(
            merge_values(json!({"a": 1, "b": 2}), json!({"b": 9, "c": 3})),
            json!({"a": 1, "b": 2, "c": 3})
        );
        assert_eq!(
            merge_values(json!(["x", "y"]), json!(["y", "z", "z"])),
            json!(["x", "y", "z"])
        );
        assert_eq!(merge_values(json!(["x"]), json!("str")), json!("str"));
    }
}
