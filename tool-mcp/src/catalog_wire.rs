//! The protocol side of a [`Catalog`]: `prompts/*`, `resources/*` and
//! `completion/complete` answers, resource subscriptions of a session, and
//! the catalog's change notifications, for [`McpServer`](crate::McpServer).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, Reference,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;
use tool_rules::text::{Clip, clip};

use crate::catalog::{Arguments, Catalog, GetError, MAX_SUBSCRIPTIONS, MAX_URI_BYTES};

/// The resource URIs one initialize-era session subscribed to.
#[derive(Clone, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<HashSet<String>>>);

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn contains(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }

    /// Subscribes to `uri`, a known resource URI (or one a template matches).
    pub(crate) fn subscribe(&self, catalog: &Catalog, uri: &str) -> Result<(), ErrorData> {
        check_uri(uri)?;
        if !catalog.knows_uri(uri) {
            return Err(not_found(uri));
        }
        let mut set = self.lock();
        if set.len() >= MAX_SUBSCRIPTIONS && !set.contains(uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "this session is subscribed to {MAX_SUBSCRIPTIONS} resources already, the most allowed: unsubscribe from one first"
                ),
                None,
            ));
        }
        set.insert(uri.to_owned());
        Ok(())
    }

    /// Ends the subscription to `uri` (none is no error).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.lock().remove(uri);
    }
}

fn check_uri(uri: &str) -> Result<(), ErrorData> {
    if uri.len() > MAX_URI_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "the URI is {} bytes, over the limit of {MAX_URI_BYTES}",
                uri.len()
            ),
            None,
        ));
    }
    Ok(())
}

/// "Resource not found" with the URI in `data` (SEP-2164); rmcp sends it
/// as `-32002` to 2025-11-25 clients and `-32602` from 2026-07-28 on.
fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Resource not found: {}", clip(uri, Clip::chars(200))),
        Some(json!({ "uri": uri })),
    )
}

fn get_error(e: GetError) -> ErrorData {
    match e {
        GetError::Arguments(m) => ErrorData::invalid_params(m, None),
        GetError::Failed(m) => ErrorData::internal_error(m, None),
    }
}

pub(crate) fn list_prompts(catalog: &Catalog) -> ListPromptsResult {
    ListPromptsResult::with_all_items(catalog.prompt_definitions())
}

pub(crate) fn list_resources(catalog: &Catalog) -> ListResourcesResult {
    ListResourcesResult::with_all_items(catalog.resource_definitions())
}

pub(crate) fn list_templates(catalog: &Catalog) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(catalog.template_definitions())
}

pub(crate) async fn get_prompt(
    catalog: &Catalog,
    request: GetPromptRequestParams,
    ctx: tool_core::ToolContext,
) -> Result<GetPromptResult, ErrorData> {
    let Some(prompt) = catalog.prompt(&request.name) else {
        let names = catalog.prompt_names();
        return Err(ErrorData::invalid_params(
            format!(
                "unknown prompt: {} (prompts: {})",
                clip(&request.name, Clip::chars(64)),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ),
            None,
        ));
    };
    let arguments: Arguments = request
        .arguments
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, v)
        })
        .collect();
    let messages = prompt.render_in(arguments, ctx).await.map_err(get_error)?;
    let mut result = GetPromptResult::new(messages);
    result.description = prompt.definition().description;
    Ok(result)
}

pub(crate) async fn read_resource(
    catalog: &Catalog,
    request: &ReadResourceRequestParams,
) -> Result<ReadResourceResult, ErrorData> {
    check_uri(&request.uri)?;
    match catalog.read_uri(&request.uri).await {
        None => Err(not_found(&request.uri)),
        Some(Err(e)) => Err(get_error(e)),
        Some(Ok(contents)) => Ok(ReadResourceResult::new(vec![contents])),
    }
}

pub(crate) fn complete(
    catalog: &Catalog,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let others: Arguments = request
        .context
        .as_ref()
        .and_then(|c| c.arguments.clone())
        .map(|a| a.into_iter().collect())
        .unwrap_or_default();
    let argument = &request.argument;
    let info = match &request.r#ref {
        Reference::Prompt(p) => catalog
            .complete_prompt(&p.name, &argument.name, &argument.value, &others)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("unknown prompt: {}", clip(&p.name, Clip::chars(64))),
                    None,
                )
            })?,
        Reference::Resource(r) => {
            check_uri(&r.uri)?;
            catalog
                .complete_template(&r.uri, &argument.name, &argument.value, &others)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "unknown resource template: {}",
                            clip(&r.uri, Clip::chars(200))
                        ),
                        None,
                    )
                })?
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "unknown completion reference type",
                None,
            ));
        }
    };
    Ok(CompleteResult::new(info))
}

/// Forwards the catalog's changes to one initialize-era session until the
/// session ends (polled every `poll`): list changes to every session,
/// resource updates to the sessions subscribed to the URI.
pub(crate) fn forward_changes(
    catalog: &Catalog,
    peer: Peer<RoleServer>,
    subscriptions: Subscriptions,
    poll: std::time::Duration,
) {
    let mut changes = catalog.subscribe_changes();
    let mut updates = catalog.subscribe_updates();
    tokio::spawn(async move {
        let mut seen = *changes.borrow_and_update();
        let mut tick = tokio::time::interval(poll);
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let now = *changes.borrow_and_update();
                    if now.prompts != seen.prompts && peer.notify_prompt_list_changed().await.is_err() {
                        break;
                    }
                    if now.resources != seen.resources && peer.notify_resource_list_changed().await.is_err() {
                        break;
                    }
                    seen = now;
                }
                uri = updates.recv() => {
                    match uri {
                        Ok(uri) => {
                            if subscriptions.contains(&uri) {
                                let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                                if peer.notify_resource_updated(param).await.is_err() {
                                    break;
                                }
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
                _ = tick.tick() => {
                    if peer.is_transport_closed() {
                        break;
                    }
                }
            }
        }
    });
}
