//! `tool-mcp-conformance-client URL`: this crate's MCP client driven by the
//! MCP conformance suite's client scenarios (`conformance client --command`).
//!
//! The suite starts a scenario's server, runs this program with the server's
//! URL as the last argument and the scenario in `MCP_CONFORMANCE_SCENARIO`
//! (its era in `MCP_CONFORMANCE_PROTOCOL_VERSION`, any tool calls it wants in
//! `MCP_CONFORMANCE_CONTEXT`'s `toolCalls`), and judges what arrives. This
//! program does what an importing host does: connect with
//! [`McpToolSource::http`] in the era asked for, list every tool, call the
//! ones the scenario names, and exit 0; the suite decides what passed.

use std::process::ExitCode;

use serde_json::{Map, Value, json};
use tool_core::ToolContext;
use tool_mcp::{Grant, Idp, LoopbackLogin, McpToolSource, OAuth, ProtocolEra, TokenSource};

/// The client ID metadata document URL the suite's CIMD scenarios expect.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Files holding the scenario's secrets (a signing key, a platform or ID
/// token), written `0600` as a person would keep them and removed at exit:
/// the settings name files, never the secrets themselves.
struct SecretFiles(Vec<std::path::PathBuf>);

impl SecretFiles {
    fn write(&mut self, name: &str, content: &str) -> std::path::PathBuf {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = std::env::temp_dir().join(format!(
            "tool-mcp-conformance-{}-{name}",
            std::process::id()
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(content.as_bytes()));
        if let Err(e) = written {
            eprintln!("{}: {e}", path.display());
        }
        self.0.push(path.clone());
        path
    }
}

impl Drop for SecretFiles {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The OAuth settings of a scenario: a client id and secret when its
/// context has them (pre-registration, client credentials), this client's
/// metadata document URL otherwise, and a login whose "browser" is an HTTP
/// client following the authorization server's redirects back to the
/// loopback listener (the suite's authorization server approves at once).
/// A signing key (`private_key_jwt`), a workload's platform token (WIF) and
/// an enterprise IdP's ID token go through files in `secrets`.
fn oauth(scenario: &str, context: &Value, secrets: &mut SecretFiles) -> OAuth {
    let mut oauth = OAuth::new()
        .with_client_metadata_url(CLIENT_METADATA_URL)
        .with_login(LoopbackLogin::new(|url| {
            tokio::spawn(async move {
                if let Err(e) = reqwest::get(&url).await {
                    eprintln!("authorization URL: {e}");
                }
            });
        }));
    if let Some(id) = context["client_id"].as_str() {
        oauth = oauth.with_client_id(id);
        if let Some(secret) = context["client_secret"].as_str() {
            oauth = oauth.with_client_secret(secret);
        }
    }
    if scenario.starts_with("auth/client-credentials") {
        oauth = oauth.with_grant(Grant::ClientCredentials);
        if let Some(pem) = context["private_key_pem"].as_str() {
            oauth = oauth.with_private_key_file(secrets.write("client-key.pem", pem));
        }
    }
    if scenario == "auth/wif-jwt-bearer"
        && let Some(jwt) = context["valid_jwt"].as_str()
    {
        let path = secrets.write("platform-token", jwt);
        oauth = oauth
            .with_grant(Grant::JwtBearer)
            .with_platform_token(TokenSource::File(path));
    }
    if let (Some(endpoint), Some(client), Some(id_token)) = (
        context["idp_token_endpoint"].as_str(),
        context["idp_client_id"].as_str(),
        context["idp_id_token"].as_str(),
    ) {
        let path = secrets.write("id-token", id_token);
        oauth = oauth
            .with_grant(Grant::EnterpriseManaged)
            .with_idp(Idp::new(endpoint, client, TokenSource::File(path)));
    }
    oauth
}

/// The tool calls a scenario expects when its context names none (the
/// scenarios' fixed tools, as the suite's reference clients call them).
fn default_calls(scenario: &str) -> Vec<(String, Value)> {
    let call = |name: &str, args: Value| vec![(name.to_owned(), args)];
    match scenario {
        "tools_call" => call("add_numbers", json!({"a": 5, "b": 3})),
        "sse-retry" => call("test_reconnection", json!({})),
        "elicitation-sep1034-client-defaults" => {
            call("test_client_elicitation_defaults", json!({}))
        }
        _ => Vec::new(),
    }
}

/// With no calls named: every listed tool, by its remote name, with no
/// arguments; except that a tool whose one required parameter is an object
/// named `schema` (the suite's schema echo) gets the parameters schema this
/// client kept for each other tool, which the suite then compares with what
/// it served.
fn every_tool(tools: &[tool_core::Tool]) -> Vec<(String, Value)> {
    let remote = |tool: &tool_core::Tool| {
        let name = tool.name();
        name.split_once("__").map_or(name, |(_, n)| n).to_owned()
    };
    let is_echo = |tool: &tool_core::Tool| {
        let p = &tool.spec().parameters;
        p["required"] == json!(["schema"]) && p["properties"]["schema"]["type"] == "object"
    };
    let mut calls = Vec::new();
    for tool in tools {
        if is_echo(tool) {
            for other in tools.iter().filter(|t| !is_echo(t)) {
                calls.push((remote(tool), json!({"schema": other.spec().parameters})));
            }
        } else {
            calls.push((remote(tool), json!({})));
        }
    }
    calls
}

/// The calling context: a person who answers every question of a form
/// with nothing, so each field takes its default (the suite's SEP-1034
/// scenario checks that the defaults come back), and approves confirmations.
fn person() -> ToolContext {
    ToolContext::new()
        .with_asker(|_q: tool_core::Question| async { tool_core::Answer::Answered(String::new()) })
        .with_approver(|_r: tool_core::ApprovalRequest| async {
            tool_core::ApprovalDecision::Approve
        })
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: tool-mcp-conformance-client URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let era = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => ProtocolEra::Discover,
        Ok(v) if !v.is_empty() => ProtocolEra::Initialize,
        _ => ProtocolEra::Auto,
    };
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let mut calls: Vec<(String, Value)> = context["toolCalls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| Some((c["name"].as_str()?.to_owned(), c["arguments"].clone())))
                .collect()
        })
        .unwrap_or_default();
    if calls.is_empty() {
        calls = default_calls(&scenario);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tool-mcp-conformance-client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut secrets = SecretFiles(Vec::new());
    let oauth = oauth(&scenario, &context, &mut secrets);
    runtime.block_on(async move {
        let conn = match McpToolSource::http(url.clone())
            .named("conformance")
            .with_era(era)
            .with_oauth(oauth)
            .connect()
            .await
        {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("tool-mcp-conformance-client: {e}");
                return ExitCode::FAILURE;
            }
        };
        let tools = match conn.tools().await {
            Ok(tools) => tools,
            Err(e) => {
                eprintln!("{scenario}: tools/list: {e}");
                Vec::new()
            }
        };
        eprintln!("{scenario}: {} tools listed", tools.len());
        if calls.is_empty() {
            calls = every_tool(&tools);
        }
        for (name, args) in calls {
            let args = match args {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            let result = conn.call(&name, args, &person()).await;
            eprintln!("{scenario}: {name}: {}", result.output);
        }
        conn.close();
        ExitCode::SUCCESS
    })
}
