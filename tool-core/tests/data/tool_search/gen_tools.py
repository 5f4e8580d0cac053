#!/usr/bin/env python3
"""Generates tools.json for the tool-search evaluation set (hand-written descriptions)."""
import json, sys

TYPES = {"s": "string", "i": "integer", "b": "boolean", "n": "number", "a": "array", "o": "object"}
TOOLS = []

def params(spec):
    props, req = {}, []
    if spec.strip():
        for part in spec.split("|"):
            name, t, desc = part.split(":", 2)
            name = name.strip()
            required = t.endswith("!")
            t = t.rstrip("!")
            p = {"type": TYPES[t], "description": desc.strip()}
            if t == "a":
                p["items"] = {"type": "string"}
            props[name] = p
            if required:
                req.append(name)
    return {"type": "object", "properties": props, "required": req}

def srv(server, tags, rows):
    for row in rows:
        tool, desc, extra_tags, spec = row
        TOOLS.append({
            "name": f"{server}__{tool}",
            "server": server,
            "description": desc,
            "tags": [server] + tags + [t for t in extra_tags.split() if t],
            "parameters": params(spec),
        })

OR = "owner:s!:User or organisation that owns the repository|repo:s!:Repository name"

srv("github", ["code-hosting"], [
 ("create_issue", "Open a new issue in a GitHub repository with a title, optional body, labels and assignees.", "issues",
  OR + "|title:s!:Short summary of the issue|body:s:Markdown text of the issue|labels:a:Label names to attach|assignees:a:Logins to assign"),
 ("get_issue", "Fetch one GitHub issue by number, including its state, labels, author and body.", "issues",
  OR + "|issue_number:i!:Number of the issue"),
 ("list_issues", "List issues in a GitHub repository, filtered by state, labels, assignee or update time.", "issues",
  OR + "|state:s:open, closed or all|labels:a:Only issues carrying all of these labels|since:s:ISO 8601 timestamp; only issues updated after it|per_page:i:Page size, up to 100"),
 ("update_issue", "Change an existing GitHub issue: edit title or body, close or reopen it, or replace labels and assignees.", "issues",
  OR + "|issue_number:i!:Issue to change|title:s:New title|body:s:New body|state:s:open or closed|labels:a:Replacement label set|assignees:a:Replacement assignees"),
 ("add_issue_comment", "Post a comment on a GitHub issue or pull request conversation.", "issues comments",
  OR + "|issue_number:i!:Issue or PR number|body:s!:Markdown comment text"),
 ("list_issue_comments", "Read the comment thread of a GitHub issue in chronological order.", "issues comments",
  OR + "|issue_number:i!:Issue number|per_page:i:Page size"),
 ("add_labels", "Attach one or more labels to a GitHub issue or pull request without removing existing ones.", "issues labels",
  OR + "|issue_number:i!:Issue or PR number|labels:a!:Label names to add"),
 ("create_label", "Define a new label (name, colour, description) in a GitHub repository.", "labels",
  OR + "|name:s!:Label name|color:s!:Hex colour without the leading #|description:s:What the label means"),
 ("list_milestones", "List the milestones of a GitHub repository with due dates and progress counts.", "milestones",
  OR + "|state:s:open, closed or all"),
 ("create_pull_request", "Open a pull request on GitHub proposing to merge a head branch into a base branch.", "pull-requests",
  OR + "|title:s!:PR title|head:s!:Branch containing the changes|base:s!:Branch to merge into|body:s:Description|draft:b:Open as a draft"),
 ("get_pull_request", "Get details of a GitHub pull request: branches, state, mergeability, author and description.", "pull-requests",
  OR + "|pull_number:i!:PR number"),
 ("list_pull_requests", "List pull requests in a GitHub repository filtered by state, base or head branch.", "pull-requests",
  OR + "|state:s:open, closed or all|base:s:Filter by target branch|head:s:Filter by source branch as user:branch|sort:s:created, updated or popularity"),
 ("get_pull_request_diff", "Return the unified diff of all changes in a GitHub pull request.", "pull-requests diff",
  OR + "|pull_number:i!:PR number"),
 ("list_pull_request_files", "List the files a GitHub pull request touches with per-file additions and deletions.", "pull-requests",
  OR + "|pull_number:i!:PR number"),
 ("merge_pull_request", "Merge a GitHub pull request using a merge commit, squash or rebase.", "pull-requests",
  OR + "|pull_number:i!:PR number|merge_method:s:merge, squash or rebase|commit_title:s:Title for the resulting commit"),
 ("create_pull_request_review", "Submit a review on a GitHub pull request: approve, request changes, or comment, optionally with line comments.", "pull-requests review",
  OR + "|pull_number:i!:PR number|event:s!:APPROVE, REQUEST_CHANGES or COMMENT|body:s:Overall review text|comments:a:Line comments as JSON strings with path, line and body"),
 ("request_reviewers", "Ask specific users or teams to review a GitHub pull request.", "pull-requests review",
  OR + "|pull_number:i!:PR number|reviewers:a:User logins|team_reviewers:a:Team slugs"),
 ("get_pull_request_status", "Show the combined CI check and status results for the head commit of a GitHub pull request.", "pull-requests ci",
  OR + "|pull_number:i!:PR number"),
 ("get_file_contents", "Read a file or list a directory from a GitHub repository at a given branch, tag or commit.", "files",
  OR + "|path:s!:Path inside the repository|ref:s:Branch, tag or commit SHA; default branch if omitted"),
 ("create_or_update_file", "Commit a single file to a GitHub repository, creating it or replacing its content.", "files commits",
  OR + "|path:s!:File path|content:s!:New file content|message:s!:Commit message|branch:s!:Branch to commit to|sha:s:Blob SHA of the file being replaced"),
 ("push_files", "Commit several files to a GitHub branch in one commit.", "files commits",
  OR + "|branch:s!:Target branch|files:a!:Files as JSON strings with path and content|message:s!:Commit message"),
 ("delete_file", "Remove a file from a GitHub repository with a commit.", "files commits",
  OR + "|path:s!:File to delete|message:s!:Commit message|branch:s!:Branch|sha:s!:Blob SHA of the file"),
 ("create_branch", "Create a new branch in a GitHub repository starting from an existing branch or commit.", "branches",
  OR + "|branch:s!:Name of the new branch|from_branch:s:Source branch; default branch if omitted"),
 ("list_branches", "List the branches of a GitHub repository, with their protection status.", "branches",
  OR + "|protected:b:Only protected branches"),
 ("list_commits", "List commits on a GitHub branch or touching a path, newest first.", "commits history",
  OR + "|sha:s:Branch or commit to start from|path:s:Only commits touching this path|author:s:Filter by author login or email|since:s:ISO 8601 lower bound"),
 ("get_commit", "Show a single GitHub commit: message, author, parents and changed files with patches.", "commits",
  OR + "|sha:s!:Commit SHA"),
 ("compare_commits", "Compare two refs on GitHub and list the commits and file changes between them.", "commits diff",
  OR + "|base:s!:Base ref|head:s!:Head ref"),
 ("create_repository", "Create a new GitHub repository for the authenticated user or an organisation.", "repos",
  "name:s!:Repository name|org:s:Organisation to create it in|description:s:Short description|private:b:Make it private|auto_init:b:Create an initial README commit"),
 ("fork_repository", "Fork a GitHub repository into your account or an organisation.", "repos",
  OR + "|organization:s:Organisation to fork into"),
 ("get_repository", "Get metadata about a GitHub repository: description, default branch, stars, topics, visibility.", "repos",
  OR),
 ("search_repositories", "Search GitHub for repositories by keywords, language, stars or topic.", "search repos",
  "query:s!:GitHub repository search query|sort:s:stars, forks or updated|per_page:i:Page size"),
 ("search_code", "Search source code across GitHub repositories using GitHub code search syntax.", "search code",
  "query:s!:Code search query, e.g. 'parseConfig repo:acme/api language:go'|per_page:i:Page size"),
 ("search_issues", "Search issues and pull requests across GitHub with qualifiers like repo:, is:open, author:, label:.", "search issues",
  "query:s!:Issue search query|sort:s:comments, reactions, created or updated|per_page:i:Page size"),
 ("search_users", "Find GitHub users or organisations by name, location or follower count.", "search users",
  "query:s!:User search query"),
 ("list_releases", "List published and draft releases of a GitHub repository.", "releases",
  OR + "|per_page:i:Page size"),
 ("get_latest_release", "Get the most recent non-draft, non-prerelease release of a GitHub repository.", "releases",
  OR),
 ("create_release", "Publish a GitHub release for a tag with title and release notes.", "releases",
  OR + "|tag_name:s!:Tag to release; created if missing|name:s:Release title|body:s:Release notes|draft:b:Save as draft|prerelease:b:Mark as prerelease|generate_release_notes:b:Let GitHub write notes from merged PRs"),
 ("list_tags", "List the git tags of a GitHub repository.", "releases tags",
  OR),
 ("list_workflow_runs", "List GitHub Actions workflow runs, optionally for one workflow, branch or status.", "actions ci",
  OR + "|workflow_id:s:Workflow file name or ID|branch:s:Branch filter|status:s:queued, in_progress, completed, failure, success"),
 ("get_workflow_run_logs", "Download the job logs of a GitHub Actions workflow run.", "actions ci logs",
  OR + "|run_id:i!:Workflow run ID|failed_only:b:Only logs of failed jobs"),
 ("rerun_workflow", "Re-run a GitHub Actions workflow run, all jobs or only failed ones.", "actions ci",
  OR + "|run_id:i!:Workflow run ID|failed_only:b:Only re-run failed jobs"),
 ("trigger_workflow", "Start a GitHub Actions workflow that has a workflow_dispatch trigger.", "actions ci",
  OR + "|workflow_id:s!:Workflow file name or ID|ref:s!:Branch or tag to run on|inputs:o:Workflow inputs"),
 ("cancel_workflow_run", "Cancel a queued or running GitHub Actions workflow run.", "actions ci",
  OR + "|run_id:i!:Workflow run ID"),
 ("list_notifications", "List the authenticated user's GitHub notifications (mentions, review requests, CI).", "notifications",
  "all:b:Include already read notifications|participating:b:Only threads you participate in"),
 ("create_gist", "Create a GitHub gist from one or more files.", "gists",
  "files:o!:Map of file name to content|description:s:Gist description|public:b:Make it public"),
 ("list_dependabot_alerts", "List Dependabot security alerts for vulnerable dependencies in a GitHub repository.", "security",
  OR + "|severity:s:low, medium, high or critical|state:s:open, fixed or dismissed"),
 ("list_code_scanning_alerts", "List code scanning (static analysis) alerts for a GitHub repository.", "security",
  OR + "|ref:s:Branch or PR ref|state:s:open, closed, dismissed or fixed"),
 ("star_repository", "Star a GitHub repository for the authenticated user.", "repos",
  OR),
])

GP = "project:s!:Project ID or namespace/path"
srv("gitlab", ["code-hosting"], [
 ("create_issue", "Open an issue in a GitLab project.", "issues", GP + "|title:s!:Issue title|description:s:Markdown body|labels:a:Labels"),
 ("list_issues", "List issues of a GitLab project filtered by state, labels or assignee.", "issues", GP + "|state:s:opened or closed|labels:a:Label filter|assignee_username:s:Assignee filter"),
 ("create_merge_request", "Open a GitLab merge request from a source branch into a target branch.", "merge-requests", GP + "|source_branch:s!:Branch with the changes|target_branch:s!:Branch to merge into|title:s!:MR title|description:s:MR description"),
 ("list_merge_requests", "List merge requests of a GitLab project.", "merge-requests", GP + "|state:s:opened, merged, closed or all"),
 ("get_merge_request_diff", "Get the changes of a GitLab merge request as diffs per file.", "merge-requests diff", GP + "|merge_request_iid:i!:MR internal ID"),
 ("get_file", "Read a file from a GitLab repository at a ref.", "files", GP + "|file_path:s!:Path|ref:s:Branch, tag or SHA"),
 ("list_pipelines", "List CI/CD pipelines of a GitLab project with their status.", "ci pipelines", GP + "|ref:s:Branch or tag|status:s:running, success, failed..."),
 ("retry_pipeline_job", "Retry a failed job of a GitLab CI pipeline.", "ci pipelines", GP + "|job_id:i!:Job ID"),
])

srv("filesystem", ["files", "local"], [
 ("read_file", "Read the full text of a file on the local disk.", "read", "path:s!:Path to the file|encoding:s:Text encoding, utf-8 by default"),
 ("read_multiple_files", "Read several local files at once and return each file's contents, reporting failures per file.", "read", "paths:a!:Paths to read"),
 ("write_file", "Create a local file or overwrite it entirely with new content.", "write", "path:s!:Destination path|content:s!:Full file content"),
 ("edit_file", "Apply exact text replacements to a local file and return a diff of the change.", "write edit", "path:s!:File to edit|edits:a!:Edits as JSON strings with oldText and newText|dry_run:b:Only show the diff"),
 ("append_file", "Add text to the end of a local file, creating it if needed.", "write", "path:s!:File path|content:s!:Text to append"),
 ("create_directory", "Make a directory, including missing parent directories.", "directories", "path:s!:Directory to create"),
 ("list_directory", "List the entries of a local directory, marking files and subdirectories.", "directories", "path:s!:Directory to list|show_hidden:b:Include dotfiles"),
 ("directory_tree", "Return a recursive JSON tree of a directory's files and folders.", "directories", "path:s!:Root directory|max_depth:i:Depth limit"),
 ("move_file", "Move or rename a local file or directory.", "move", "source:s!:Current path|destination:s!:New path"),
 ("copy_file", "Copy a local file or directory to a new location.", "copy", "source:s!:Path to copy|destination:s!:Target path|recursive:b:Copy directories recursively"),
 ("delete_file", "Delete a local file or an empty directory.", "delete", "path:s!:Path to remove|recursive:b:Remove a directory and its contents"),
 ("search_files", "Find files whose names match a glob pattern under a directory.", "search", "path:s!:Directory to search|pattern:s!:Glob such as **/*.yaml|exclude:a:Globs to skip"),
 ("grep", "Search inside local files for lines matching a regular expression.", "search", "path:s!:File or directory|regex:s!:Regular expression|include:s:Only files matching this glob|ignore_case:b:Case-insensitive"),
 ("get_file_info", "Return metadata for a local path: size, timestamps, permissions and type.", "metadata", "path:s!:File or directory"),
 ("list_allowed_directories", "Show which directories this filesystem server is permitted to access.", "config", ""),
])

RP = "repo_path:s!:Path to the local git repository"
srv("git", ["vcs", "local"], [
 ("status", "Show the working tree status of a local git repository: staged, unstaged and untracked files.", "", RP),
 ("diff_unstaged", "Show changes in the working tree that are not yet staged.", "diff", RP + "|context_lines:i:Lines of context"),
 ("diff_staged", "Show changes that are staged for the next commit.", "diff", RP + "|context_lines:i:Lines of context"),
 ("diff", "Show differences between the working tree or HEAD and another branch or commit.", "diff", RP + "|target:s!:Branch or commit to compare with"),
 ("add", "Stage files for the next commit in a local git repository.", "staging", RP + "|files:a!:Paths to stage"),
 ("reset", "Unstage all staged changes, keeping the working tree as is.", "staging", RP),
 ("commit", "Record staged changes as a new commit with a message.", "commits", RP + "|message:s!:Commit message"),
 ("log", "Show recent commit history of a local git repository.", "history", RP + "|max_count:i:Number of commits|path:s:Only commits touching this path"),
 ("show", "Show the contents and metadata of a commit in a local repository.", "commits", RP + "|revision:s!:Commit, tag or branch"),
 ("create_branch", "Create a new branch in a local git repository.", "branches", RP + "|branch_name:s!:New branch|base_branch:s:Start point"),
 ("checkout", "Switch the local repository to another branch or commit.", "branches", RP + "|branch_name:s!:Branch to check out"),
 ("list_branches", "List local or remote branches of a git repository.", "branches", RP + "|remote:b:List remote-tracking branches"),
 ("blame", "Show which commit and author last changed each line of a file.", "history", RP + "|path:s!:File path|start_line:i:First line|end_line:i:Last line"),
 ("stash", "Save uncommitted changes to the stash, or pop/list stashed changes.", "", RP + "|action:s!:push, pop or list|message:s:Stash message"),
 ("pull", "Fetch from the remote and integrate into the current branch.", "remote", RP + "|remote:s:Remote name, origin by default|rebase:b:Rebase instead of merge"),
 ("push", "Push local commits of a branch to a remote.", "remote", RP + "|remote:s:Remote name|branch:s:Branch to push|set_upstream:b:Set upstream tracking"),
 ("clone", "Clone a remote git repository to a local directory.", "remote", "url:s!:Repository URL|directory:s!:Target directory|branch:s:Branch to check out"),
 ("init", "Initialise a new empty git repository in a directory.", "", RP),
])

srv("playwright", ["browser", "automation", "web"], [
 ("navigate", "Open a URL in the controlled browser page and wait for it to load.", "navigation", "url:s!:Address to open"),
 ("go_back", "Go to the previous page in the browser history.", "navigation", ""),
 ("go_forward", "Go to the next page in the browser history.", "navigation", ""),
 ("snapshot", "Capture an accessibility snapshot of the current page listing interactive elements with references.", "inspect", ""),
 ("click", "Click an element on the current page identified by a snapshot reference or selector.", "interaction", "element:s!:Human-readable element description|ref:s!:Element reference from the snapshot|double_click:b:Double-click instead"),
 ("type", "Type text into an editable element, optionally pressing Enter afterwards.", "interaction forms", "element:s!:Element description|ref:s!:Element reference|text:s!:Text to type|submit:b:Press Enter after typing"),
 ("fill_form", "Fill several form fields on the page in one step.", "interaction forms", "fields:a!:Fields as JSON strings with ref and value"),
 ("select_option", "Choose one or more options in a dropdown select element.", "interaction forms", "ref:s!:Element reference|values:a!:Option values to select"),
 ("hover", "Move the mouse over an element to reveal menus or tooltips.", "interaction", "ref:s!:Element reference"),
 ("press_key", "Press a keyboard key or combination in the browser, such as Escape or Control+A.", "interaction keyboard", "key:s!:Key name"),
 ("drag", "Drag one element and drop it onto another.", "interaction", "start_ref:s!:Element to drag|end_ref:s!:Drop target"),
 ("take_screenshot", "Save a screenshot of the current page or one element as an image.", "screenshot", "full_page:b:Capture the whole scrollable page|ref:s:Element to capture|filename:s:Output file name"),
 ("evaluate", "Run a JavaScript expression in the page and return its result.", "javascript", "function:s!:JavaScript function source to run in the page|ref:s:Element passed as the argument"),
 ("wait_for", "Wait until some text appears or disappears, or for a number of seconds.", "sync", "text:s:Text to wait for|text_gone:s:Text to wait to disappear|time:n:Seconds to wait"),
 ("console_messages", "Return the console log messages the page has printed.", "debug", "only_errors:b:Only errors"),
 ("network_requests", "List network requests the page has made since it loaded.", "debug network", ""),
 ("tab_list", "List the open browser tabs with titles and URLs.", "tabs", ""),
 ("tab_new", "Open a new browser tab, optionally at a URL.", "tabs", "url:s:Address to open"),
 ("tab_select", "Switch to a browser tab by index.", "tabs", "index:i!:Tab index"),
 ("tab_close", "Close a browser tab, the current one by default.", "tabs", "index:i:Tab index"),
 ("file_upload", "Upload local files through the page's open file chooser.", "forms files", "paths:a!:Absolute paths of files to upload"),
 ("handle_dialog", "Accept or dismiss a JavaScript alert, confirm or prompt dialog.", "dialogs", "accept:b!:Accept if true, dismiss if false|prompt_text:s:Text for a prompt dialog"),
 ("resize", "Resize the browser viewport to a width and height.", "viewport", "width:i!:Width in pixels|height:i!:Height in pixels"),
 ("pdf_save", "Save the current page as a PDF file.", "export", "filename:s:Output file name"),
 ("close", "Close the browser and end the session.", "", ""),
])

srv("puppeteer", ["browser", "automation", "web"], [
 ("navigate", "Load a URL in the Puppeteer-controlled Chrome tab.", "navigation", "url:s!:URL to load|launch_options:o:Options for launching Chrome"),
 ("screenshot", "Take a PNG screenshot of the page or of the element matching a CSS selector.", "screenshot", "name:s!:Name for the screenshot|selector:s:CSS selector of the element|width:i:Viewport width|height:i:Viewport height"),
 ("click", "Click the element matching a CSS selector.", "interaction", "selector:s!:CSS selector"),
 ("fill", "Type a value into an input field matched by a CSS selector.", "interaction forms", "selector:s!:CSS selector|value:s!:Value to enter"),
 ("select", "Choose an option in a select element matched by a CSS selector.", "interaction forms", "selector:s!:CSS selector|value:s!:Option value"),
 ("hover", "Hover over the element matching a CSS selector.", "interaction", "selector:s!:CSS selector"),
 ("evaluate", "Execute a JavaScript snippet in the Puppeteer page context.", "javascript", "script:s!:JavaScript code"),
])

CONN = "database:s:Database name; the default connection if omitted"
srv("postgres", ["database", "sql"], [
 ("query", "Run a read-only SQL query against PostgreSQL and return the rows.", "read", "sql:s!:SELECT statement|params:a:Positional parameters for $1, $2..."),
 ("execute", "Run a data-changing SQL statement (INSERT, UPDATE, DELETE, DDL) on PostgreSQL.", "write", "sql:s!:Statement to run|params:a:Positional parameters"),
 ("list_schemas", "List the schemas in the PostgreSQL database.", "schema", ""),
 ("list_tables", "List tables in a PostgreSQL schema with estimated row counts.", "schema", "schema:s:Schema name, public by default"),
 ("describe_table", "Show the columns, types, defaults, indexes and constraints of a PostgreSQL table.", "schema", "table:s!:Table name|schema:s:Schema name"),
 ("explain_query", "Show the PostgreSQL execution plan of a query, optionally with ANALYZE timings.", "performance", "sql:s!:Query to explain|analyze:b:Actually run it and report timings"),
 ("list_slow_queries", "Report the slowest statements recorded by pg_stat_statements.", "performance", "limit:i:How many to return"),
 ("list_active_connections", "Show current PostgreSQL sessions and what they are running.", "admin", ""),
])

srv("mysql", ["database", "sql"], [
 ("query", "Execute a SQL query on a MySQL server and return the result set.", "read", "sql:s!:SQL statement|" + CONN),
 ("execute", "Run a modifying statement on MySQL and report affected rows.", "write", "sql:s!:Statement|" + CONN),
 ("list_databases", "List the databases on the MySQL server.", "schema", ""),
 ("list_tables", "List the tables in a MySQL database.", "schema", CONN),
 ("describe_table", "Show the column definitions and keys of a MySQL table.", "schema", "table:s!:Table name|" + CONN),
 ("show_processlist", "Show running MySQL threads and their current statements.", "admin", ""),
])

srv("sqlite", ["database", "sql", "local"], [
 ("read_query", "Run a SELECT on the local SQLite database file and return the rows.", "read", "query:s!:SELECT statement"),
 ("write_query", "Run an INSERT, UPDATE or DELETE on the local SQLite database.", "write", "query:s!:Modifying statement"),
 ("create_table", "Create a new table in the SQLite database.", "schema", "query:s!:CREATE TABLE statement"),
 ("list_tables", "List all tables in the SQLite database.", "schema", ""),
 ("describe_table", "Show the column layout of a SQLite table.", "schema", "table_name:s!:Table name"),
 ("append_insight", "Save a business insight discovered during analysis to the SQLite server's memo.", "notes", "insight:s!:The insight text"),
 ("import_csv", "Load a CSV file into a new or existing SQLite table.", "import", "path:s!:CSV file path|table_name:s!:Destination table|header:b:First row holds column names"),
])

MC = "database:s!:Database name|collection:s!:Collection name"
srv("mongodb", ["database", "nosql"], [
 ("find", "Find documents in a MongoDB collection matching a filter, with projection, sort and limit.", "read", MC + "|filter:o:Query filter document|projection:o:Fields to include or exclude|sort:o:Sort document|limit:i:Maximum documents"),
 ("aggregate", "Run an aggregation pipeline on a MongoDB collection.", "read analytics", MC + "|pipeline:a!:Pipeline stages as JSON strings"),
 ("count", "Count the documents in a MongoDB collection that match a filter.", "read", MC + "|filter:o:Query filter"),
 ("insert_many", "Insert one or more documents into a MongoDB collection.", "write", MC + "|documents:a!:Documents as JSON strings"),
 ("update_many", "Update all documents matching a filter in a MongoDB collection.", "write", MC + "|filter:o!:Which documents|update:o!:Update operators such as $set"),
 ("delete_many", "Delete documents matching a filter from a MongoDB collection.", "write delete", MC + "|filter:o!:Which documents"),
 ("list_collections", "List the collections of a MongoDB database.", "schema", "database:s!:Database name"),
 ("collection_schema", "Infer the field names and types of a MongoDB collection from a sample of documents.", "schema", MC + "|sample_size:i:Documents to sample"),
 ("create_index", "Create an index on fields of a MongoDB collection.", "schema performance", MC + "|keys:o!:Index key specification|name:s:Index name"),
 ("list_databases", "List databases on the MongoDB cluster with their sizes.", "schema", ""),
])

srv("redis", ["database", "cache", "key-value"], [
 ("get", "Read the string value stored at a Redis key.", "read", "key:s!:Key name"),
 ("set", "Store a string value at a Redis key, optionally with an expiry.", "write", "key:s!:Key name|value:s!:Value|expire_seconds:i:Time to live in seconds"),
 ("delete", "Remove one or more keys from Redis.", "delete", "keys:a!:Keys to delete"),
 ("scan_keys", "Iterate Redis keys matching a glob pattern without blocking the server.", "read", "pattern:s!:Pattern such as session:*|count:i:Hint for keys per batch"),
 ("hgetall", "Return all fields and values of a Redis hash.", "read hash", "key:s!:Hash key"),
 ("hset", "Set fields in a Redis hash.", "write hash", "key:s!:Hash key|fields:o!:Field to value map"),
 ("lpush", "Push values to the head of a Redis list.", "write list queue", "key:s!:List key|values:a!:Values to push"),
 ("ttl", "Show the remaining time to live of a Redis key in seconds.", "read expiry", "key:s!:Key name"),
 ("publish", "Publish a message to a Redis pub/sub channel.", "pubsub", "channel:s!:Channel name|message:s!:Message payload"),
 ("info", "Return Redis server statistics: memory, clients, keyspace and replication.", "admin", "section:s:Section such as memory or clients"),
])

srv("slack", ["chat", "messaging"], [
 ("list_channels", "List public channels in the Slack workspace with member counts and topics.", "channels", "limit:i:Page size|cursor:s:Pagination cursor"),
 ("post_message", "Send a message to a Slack channel.", "messages", "channel_id:s!:Channel ID or name|text:s!:Message text in Slack markdown"),
 ("reply_to_thread", "Post a reply inside an existing Slack message thread.", "messages threads", "channel_id:s!:Channel ID|thread_ts:s!:Timestamp of the parent message|text:s!:Reply text"),
 ("add_reaction", "Add an emoji reaction to a Slack message.", "reactions", "channel_id:s!:Channel ID|timestamp:s!:Message timestamp|reaction:s!:Emoji name without colons"),
 ("get_channel_history", "Read the most recent messages posted in a Slack channel.", "messages history", "channel_id:s!:Channel ID|limit:i:Number of messages|oldest:s:Only messages after this timestamp"),
 ("get_thread_replies", "Read all replies in a Slack message thread.", "threads", "channel_id:s!:Channel ID|thread_ts:s!:Parent message timestamp"),
 ("list_users", "List members of the Slack workspace with names and titles.", "users", "limit:i:Page size"),
 ("get_user_profile", "Get a Slack user's profile: display name, email, title, time zone, status.", "users", "user_id:s!:User ID"),
 ("search_messages", "Search Slack messages across channels using Slack search modifiers (in:, from:, before:).", "search", "query:s!:Search query|count:i:Results per page"),
 ("send_direct_message", "Send a private direct message to a Slack user.", "messages dm", "user_id:s!:Recipient user ID|text:s!:Message text"),
 ("create_channel", "Create a new Slack channel, public or private.", "channels", "name:s!:Channel name|is_private:b:Create as private"),
 ("invite_to_channel", "Invite users to a Slack channel.", "channels", "channel_id:s!:Channel ID|user_ids:a!:Users to invite"),
 ("set_channel_topic", "Change the topic line of a Slack channel.", "channels", "channel_id:s!:Channel ID|topic:s!:New topic"),
 ("upload_file", "Share a file into a Slack channel with an optional comment.", "files", "channel_id:s!:Channel ID|path:s!:Local file path|initial_comment:s:Message to go with it"),
 ("schedule_message", "Schedule a Slack message to be posted to a channel at a future time.", "messages scheduling", "channel_id:s!:Channel ID|text:s!:Message text|post_at:s!:ISO 8601 time to post"),
 ("set_status", "Set your own Slack status text, emoji and expiry.", "users status", "status_text:s!:Status text|status_emoji:s:Emoji|expiration:s:ISO 8601 time when it clears"),
])

srv("discord", ["chat", "messaging"], [
 ("send_message", "Send a message to a Discord channel.", "messages", "channel_id:s!:Channel ID|content:s!:Message content"),
 ("read_messages", "Read recent messages from a Discord channel.", "messages history", "channel_id:s!:Channel ID|limit:i:Number of messages"),
 ("list_channels", "List the text and voice channels of a Discord server.", "channels", "guild_id:s!:Server ID"),
 ("add_reaction", "React to a Discord message with an emoji.", "reactions", "channel_id:s!:Channel ID|message_id:s!:Message ID|emoji:s!:Emoji"),
 ("create_thread", "Start a thread from a Discord message or in a channel.", "threads", "channel_id:s!:Channel ID|name:s!:Thread name|message_id:s:Message to start from"),
 ("list_members", "List members of a Discord server with their roles.", "users", "guild_id:s!:Server ID|limit:i:Page size"),
])

srv("msteams", ["chat", "messaging"], [
 ("send_channel_message", "Post a message in a Microsoft Teams channel.", "messages", "team_id:s!:Team ID|channel_id:s!:Channel ID|content:s!:Message body"),
 ("list_chats", "List the Teams chats the user takes part in.", "chats", "limit:i:Page size"),
 ("send_chat_message", "Send a message in a one-to-one or group Teams chat.", "messages dm", "chat_id:s!:Chat ID|content:s!:Message body"),
 ("list_teams", "List the Microsoft Teams the user belongs to.", "teams", ""),
])

CAL = "calendar_id:s:Calendar ID; primary calendar if omitted"
srv("gcal", ["calendar", "scheduling"], [
 ("list_events", "List events on a Google Calendar between two times.", "events", CAL + "|time_min:s!:ISO 8601 start of the window|time_max:s!:ISO 8601 end of the window|query:s:Free-text filter"),
 ("get_event", "Get full details of one calendar event: attendees, location, conferencing link.", "events", CAL + "|event_id:s!:Event ID"),
 ("create_event", "Add an event to a Google Calendar, with attendees, location and optional video link.", "events", CAL + "|summary:s!:Event title|start:s!:ISO 8601 start|end:s!:ISO 8601 end|attendees:a:Email addresses to invite|location:s:Place|add_meet_link:b:Attach a video conference|recurrence:a:RRULE lines for repeating events"),
 ("update_event", "Change time, title, attendees or other fields of an existing calendar event.", "events", CAL + "|event_id:s!:Event ID|summary:s:New title|start:s:New start|end:s:New end|attendees:a:Replacement attendee list"),
 ("delete_event", "Cancel and remove an event from a Google Calendar, optionally notifying guests.", "events", CAL + "|event_id:s!:Event ID|notify_attendees:b:Send cancellation emails"),
 ("respond_to_event", "Accept, decline or tentatively accept a calendar invitation.", "events rsvp", CAL + "|event_id:s!:Event ID|response:s!:accepted, declined or tentative|comment:s:Note to the organiser"),
 ("find_free_time", "Find time slots when all given people are free, using their calendars' busy times.", "availability", "attendees:a!:Email addresses|time_min:s!:Window start|time_max:s!:Window end|duration_minutes:i!:Meeting length"),
 ("list_calendars", "List the calendars the user can see, with colours and access roles.", "calendars", ""),
 ("quick_add", "Create a calendar event from a short natural sentence like 'Lunch with Ana Friday 1pm'.", "events", CAL + "|text:s!:Sentence describing the event"),
 ("search_events", "Search calendar events by text across a date range.", "events search", CAL + "|query:s!:Words to look for|time_min:s:Window start|time_max:s:Window end"),
])

srv("outlook_calendar", ["calendar", "scheduling", "microsoft"], [
 ("list_events", "List events in an Outlook calendar in a date range.", "events", "start:s!:ISO 8601 start|end:s!:ISO 8601 end"),
 ("create_event", "Create a meeting in an Outlook calendar and send invitations.", "events", "subject:s!:Meeting subject|start:s!:ISO 8601 start|end:s!:ISO 8601 end|attendees:a:Emails|is_online_meeting:b:Add a Teams link"),
 ("find_meeting_times", "Suggest meeting times that suit all attendees in Outlook.", "availability", "attendees:a!:Emails|duration_minutes:i!:Length"),
])

srv("gmail", ["email"], [
 ("send_email", "Compose and send an email from the user's Gmail account.", "send", "to:a!:Recipient addresses|subject:s!:Subject line|body:s!:Message body|cc:a:CC addresses|bcc:a:BCC addresses|attachments:a:Local file paths to attach"),
 ("create_draft", "Save an email as a Gmail draft without sending it.", "drafts", "to:a!:Recipients|subject:s!:Subject|body:s!:Body"),
 ("search_emails", "Search the Gmail mailbox using Gmail query operators (from:, subject:, has:attachment, newer_than:).", "search", "query:s!:Gmail search query|max_results:i:Limit"),
 ("read_email", "Read a Gmail message's headers, body and attachment list.", "read", "message_id:s!:Message ID"),
 ("reply_to_email", "Reply to an email in its existing Gmail thread.", "send reply", "message_id:s!:Message being answered|body:s!:Reply text|reply_all:b:Reply to all recipients"),
 ("forward_email", "Forward a Gmail message to other recipients.", "send", "message_id:s!:Message ID|to:a!:Recipients|note:s:Text to add above"),
 ("modify_labels", "Add or remove Gmail labels on a message, e.g. archive, star or mark as read.", "labels", "message_id:s!:Message ID|add_labels:a:Labels to add|remove_labels:a:Labels to remove"),
 ("list_labels", "List the user's Gmail labels, system and custom.", "labels", ""),
 ("delete_email", "Move a Gmail message to the trash.", "delete", "message_id:s!:Message ID"),
 ("download_attachment", "Save an attachment of a Gmail message to local disk.", "attachments", "message_id:s!:Message ID|attachment_id:s!:Attachment ID|save_path:s!:Where to save it"),
 ("create_filter", "Create a Gmail filter that automatically labels, archives or forwards matching mail.", "filters", "criteria:o!:Match conditions such as from or subject|action:o!:What to do, such as addLabelIds"),
])

srv("imap_email", ["email"], [
 ("list_messages", "List messages in an IMAP mail folder, newest first.", "read", "folder:s:Folder, INBOX by default|limit:i:Number of messages|unseen_only:b:Only unread"),
 ("fetch_message", "Fetch the full content of one message from an IMAP mailbox.", "read", "folder:s:Folder|uid:i!:Message UID"),
 ("send_smtp", "Send an email through the configured SMTP server.", "send", "to:a!:Recipients|subject:s!:Subject|body:s!:Body"),
 ("move_message", "Move a message to another IMAP folder.", "organize", "uid:i!:Message UID|from_folder:s!:Source folder|to_folder:s!:Destination folder"),
])

srv("jira", ["issue-tracker", "project-management", "atlassian"], [
 ("create_issue", "Create a Jira issue (bug, story, task) in a project with summary, description and fields.", "issues", "project_key:s!:Project key such as PAY|issue_type:s!:Bug, Story, Task, Epic...|summary:s!:One-line summary|description:s:Details|priority:s:Priority name|assignee:s:Account ID|labels:a:Labels"),
 ("get_issue", "Get a Jira issue by key with status, fields, comments and links.", "issues", "issue_key:s!:Key such as PAY-123"),
 ("search_issues", "Search Jira issues with a JQL query.", "issues search", "jql:s!:JQL query|fields:a:Fields to return|max_results:i:Limit"),
 ("update_issue", "Edit fields of a Jira issue such as summary, priority, labels or assignee.", "issues", "issue_key:s!:Issue key|fields:o!:Field names to new values"),
 ("transition_issue", "Move a Jira issue through its workflow, e.g. To Do to In Progress to Done.", "issues workflow", "issue_key:s!:Issue key|transition:s!:Transition name or ID|comment:s:Comment to add"),
 ("add_comment", "Add a comment to a Jira issue.", "issues comments", "issue_key:s!:Issue key|body:s!:Comment text"),
 ("assign_issue", "Assign a Jira issue to a person or unassign it.", "issues", "issue_key:s!:Issue key|account_id:s:Assignee; empty to unassign"),
 ("list_projects", "List the Jira projects visible to the user.", "projects", ""),
 ("get_sprint", "Get the active or a specific sprint of a Jira board with its issues.", "agile sprints", "board_id:i!:Board ID|sprint_id:i:Sprint ID; active sprint if omitted"),
 ("move_to_sprint", "Move Jira issues into a sprint.", "agile sprints", "sprint_id:i!:Sprint ID|issue_keys:a!:Issues to move"),
 ("log_work", "Record time spent on a Jira issue.", "worklog time-tracking", "issue_key:s!:Issue key|time_spent:s!:Duration like 2h 30m|comment:s:What was done"),
 ("link_issues", "Create a link between two Jira issues, such as blocks or duplicates.", "issues links", "inward_issue:s!:First issue key|outward_issue:s!:Second issue key|link_type:s!:Blocks, Duplicate, Relates"),
 ("list_issues", "List the issues of a Jira project, optionally by status or assignee.", "issues", "project_key:s!:Project key|status:s:Status filter|assignee:s:Assignee filter"),
])

srv("linear", ["issue-tracker", "project-management"], [
 ("create_issue", "Create a Linear issue in a team with title, description, priority and labels.", "issues", "team_id:s!:Team ID or key|title:s!:Issue title|description:s:Markdown description|priority:i:0 none to 4 low, 1 urgent|assignee_id:s:Assignee|label_ids:a:Labels"),
 ("update_issue", "Change a Linear issue's title, state, priority, assignee or estimate.", "issues", "issue_id:s!:Issue ID or identifier like ENG-42|title:s:New title|state_id:s:Workflow state|priority:i:Priority|assignee_id:s:Assignee"),
 ("list_issues", "List Linear issues filtered by team, state, assignee or project.", "issues", "team_id:s:Team filter|state:s:State name|assignee_id:s:Assignee filter|limit:i:Limit"),
 ("search_issues", "Full-text search over Linear issues.", "issues search", "query:s!:Search text|limit:i:Limit"),
 ("get_issue", "Fetch a Linear issue by identifier with comments and sub-issues.", "issues", "issue_id:s!:Identifier like ENG-42"),
 ("add_comment", "Comment on a Linear issue.", "issues comments", "issue_id:s!:Issue ID|body:s!:Markdown comment"),
 ("list_my_issues", "List the Linear issues assigned to the current user.", "issues", "include_completed:b:Include done issues"),
 ("list_cycles", "List a Linear team's cycles (iterations) with dates and progress.", "cycles agile", "team_id:s!:Team ID"),
 ("list_projects", "List Linear projects with status, lead and target date.", "projects", "team_id:s:Team filter"),
 ("list_teams", "List teams in the Linear workspace.", "teams", ""),
])

srv("asana", ["project-management", "tasks"], [
 ("create_task", "Create a task in an Asana project with assignee and due date.", "tasks", "project_gid:s!:Project ID|name:s!:Task name|notes:s:Description|assignee:s:Assignee email|due_on:s:Due date YYYY-MM-DD"),
 ("list_tasks", "List tasks in an Asana project or assigned to a user.", "tasks", "project_gid:s:Project filter|assignee:s:Assignee filter|completed:b:Include completed"),
 ("complete_task", "Mark an Asana task as completed.", "tasks", "task_gid:s!:Task ID"),
])

srv("todoist", ["tasks", "personal"], [
 ("add_task", "Add a to-do item to Todoist, with due date in plain words and priority.", "tasks", "content:s!:Task text|due_string:s:Due date like 'next monday'|priority:i:1 to 4|project_id:s:Project"),
 ("list_tasks", "List active Todoist tasks, optionally with a filter like 'today' or 'overdue'.", "tasks", "filter:s:Todoist filter expression"),
 ("complete_task", "Tick off a Todoist task as done.", "tasks", "task_id:s!:Task ID"),
 ("update_task", "Change the text, due date or priority of a Todoist task.", "tasks", "task_id:s!:Task ID|content:s:New text|due_string:s:New due date|priority:i:New priority"),
])

srv("notion", ["docs", "wiki", "notes"], [
 ("search", "Search Notion pages and databases by title and content.", "search", "query:s!:Search text|filter_type:s:page or database"),
 ("get_page", "Retrieve a Notion page's properties.", "pages", "page_id:s!:Page ID"),
 ("get_page_content", "Read the block content of a Notion page as text.", "pages read", "page_id:s!:Page ID|recursive:b:Include nested blocks"),
 ("create_page", "Create a new Notion page under a parent page or as a database entry.", "pages write", "parent_id:s!:Parent page or database ID|title:s!:Page title|content:s:Markdown content|properties:o:Database properties"),
 ("update_page", "Change properties of a Notion page, or archive it.", "pages write", "page_id:s!:Page ID|properties:o:New property values|archived:b:Archive the page"),
 ("append_blocks", "Append paragraphs, headings, lists or to-dos to the end of a Notion page.", "pages write", "page_id:s!:Page or block ID|content:s!:Markdown to append"),
 ("query_database", "Query a Notion database with filters and sorts and return matching rows.", "databases", "database_id:s!:Database ID|filter:o:Notion filter object|sorts:a:Sorts as JSON strings"),
 ("create_database", "Create a Notion database with a property schema inside a page.", "databases", "parent_page_id:s!:Parent page|title:s!:Database title|properties:o!:Property schema"),
 ("add_comment", "Add a comment to a Notion page or discussion.", "comments", "page_id:s!:Page ID|text:s!:Comment text"),
 ("list_users", "List people and bots in the Notion workspace.", "users", ""),
])

srv("confluence", ["docs", "wiki", "atlassian"], [
 ("search", "Search Confluence content with CQL or plain text.", "search", "query:s!:CQL or text|limit:i:Limit"),
 ("get_page", "Read a Confluence page's body and metadata.", "pages read", "page_id:s!:Page ID|format:s:storage or markdown"),
 ("create_page", "Publish a new page in a Confluence space.", "pages write", "space_key:s!:Space key|title:s!:Page title|body:s!:Content|parent_id:s:Parent page"),
 ("update_page", "Replace the content of an existing Confluence page, creating a new version.", "pages write", "page_id:s!:Page ID|title:s!:Title|body:s!:New content|version_comment:s:Change note"),
 ("list_spaces", "List the Confluence spaces the user can access.", "spaces", ""),
])

srv("obsidian", ["notes", "local", "markdown"], [
 ("search_notes", "Search the Obsidian vault's Markdown notes for text.", "search", "query:s!:Text to look for"),
 ("read_note", "Read a note from the Obsidian vault.", "read", "path:s!:Vault-relative path"),
 ("append_to_note", "Append Markdown to a note in the Obsidian vault, creating it if missing.", "write", "path:s!:Vault-relative path|content:s!:Markdown to add"),
 ("list_notes", "List notes in an Obsidian vault folder.", "", "folder:s:Folder within the vault"),
])

B = "bucket:s!:Bucket name"
srv("s3", ["cloud", "storage", "aws"], [
 ("list_buckets", "List the S3 buckets in the account.", "buckets", ""),
 ("list_objects", "List objects in an S3 bucket under a key prefix.", "objects", B + "|prefix:s:Key prefix|max_keys:i:Limit|continuation_token:s:Pagination token"),
 ("get_object", "Download an S3 object's content, or save it to a local file.", "objects read", B + "|key:s!:Object key|save_to:s:Local path to write"),
 ("put_object", "Upload content or a local file to an S3 key.", "objects write upload", B + "|key:s!:Object key|body:s:Text content|file_path:s:Local file to upload|content_type:s:MIME type"),
 ("delete_object", "Delete an object from an S3 bucket.", "objects delete", B + "|key:s!:Object key"),
 ("copy_object", "Copy an S3 object to another key or bucket.", "objects", "source_bucket:s!:Source bucket|source_key:s!:Source key|dest_bucket:s!:Destination bucket|dest_key:s!:Destination key"),
 ("head_object", "Get an S3 object's size, type, ETag and last-modified time without downloading it.", "objects metadata", B + "|key:s!:Object key"),
 ("presign_url", "Generate a time-limited pre-signed URL for downloading or uploading an S3 object.", "objects sharing", B + "|key:s!:Object key|expires_in:i:Seconds until expiry|method:s:GET or PUT"),
 ("create_bucket", "Create a new S3 bucket in a region.", "buckets", B + "|region:s:AWS region"),
 ("get_bucket_policy", "Show the access policy attached to an S3 bucket.", "buckets security", B),
])

srv("gcs", ["cloud", "storage", "gcp"], [
 ("list_objects", "List objects in a Google Cloud Storage bucket.", "objects", B + "|prefix:s:Name prefix"),
 ("upload_object", "Upload a local file to a Google Cloud Storage bucket.", "objects upload", B + "|name:s!:Object name|file_path:s!:Local file"),
 ("download_object", "Download an object from Google Cloud Storage to a local file.", "objects read", B + "|name:s!:Object name|destination:s!:Local path"),
])

srv("gdrive", ["cloud", "storage", "docs", "google"], [
 ("search_files", "Search Google Drive files by name, content or type.", "search", "query:s!:Search text or Drive query|mime_type:s:Type filter|page_size:i:Limit"),
 ("read_file", "Read the content of a Google Drive file, exporting Docs and Sheets to text or CSV.", "read", "file_id:s!:File ID"),
 ("upload_file", "Upload a local file to Google Drive.", "upload", "path:s!:Local file|folder_id:s:Destination folder|name:s:Name in Drive"),
 ("create_folder", "Create a folder in Google Drive.", "folders", "name:s!:Folder name|parent_id:s:Parent folder"),
 ("share_file", "Share a Google Drive file with a person or make it link-accessible.", "sharing permissions", "file_id:s!:File ID|email:s:Person to share with|role:s!:reader, commenter or writer|anyone_with_link:b:Open to anyone with the link"),
 ("list_folder", "List the files inside a Google Drive folder.", "folders", "folder_id:s:Folder ID; My Drive root if omitted"),
 ("move_file", "Move a Google Drive file into another folder.", "organize", "file_id:s!:File ID|folder_id:s!:Destination folder"),
])

srv("gsheets", ["spreadsheets", "google"], [
 ("read_range", "Read cell values from a range of a Google Sheets spreadsheet.", "read", "spreadsheet_id:s!:Spreadsheet ID|range:s!:A1 range like Sheet1!A1:D20"),
 ("write_range", "Write values into a range of a Google Sheets spreadsheet.", "write", "spreadsheet_id:s!:Spreadsheet ID|range:s!:A1 range|values:a!:Rows as JSON arrays"),
 ("append_rows", "Append rows after the last filled row of a Google Sheets table.", "write", "spreadsheet_id:s!:Spreadsheet ID|sheet:s!:Sheet name|values:a!:Rows as JSON arrays"),
 ("create_spreadsheet", "Create a new Google Sheets spreadsheet.", "create", "title:s!:Spreadsheet title|sheets:a:Names of tabs to create"),
])

srv("airtable", ["database", "spreadsheets", "no-code"], [
 ("list_records", "List records from an Airtable table, optionally through a view or formula filter.", "read", "base_id:s!:Base ID|table:s!:Table name|view:s:View name|filter_formula:s:Airtable formula"),
 ("create_record", "Add a record to an Airtable table.", "write", "base_id:s!:Base ID|table:s!:Table name|fields:o!:Field values"),
 ("update_record", "Update fields on an Airtable record.", "write", "base_id:s!:Base ID|table:s!:Table name|record_id:s!:Record ID|fields:o!:Fields to change"),
 ("list_bases", "List the Airtable bases the token can access.", "", ""),
])

NS = "namespace:s:Namespace; default if omitted"
srv("kubernetes", ["k8s", "containers", "devops"], [
 ("list_pods", "List pods in a Kubernetes namespace with status, restarts and node.", "pods", NS + "|label_selector:s:Label selector such as app=web"),
 ("get_pod_logs", "Fetch container logs of a Kubernetes pod.", "pods logs", NS + "|pod:s!:Pod name|container:s:Container name|tail_lines:i:Last N lines|previous:b:Logs of the previous, crashed container"),
 ("describe_resource", "Describe a Kubernetes resource in detail, including recent events.", "inspect", NS + "|kind:s!:Resource kind like Pod or Service|name:s!:Resource name"),
 ("get_resources", "List Kubernetes resources of any kind, like kubectl get.", "inspect", NS + "|kind:s!:Resource kind|all_namespaces:b:Across all namespaces|output:s:wide, yaml or json"),
 ("apply_manifest", "Create or update Kubernetes resources from a YAML manifest.", "deploy", "manifest:s!:YAML content|" + NS + "|dry_run:b:Server-side dry run"),
 ("delete_resource", "Delete a Kubernetes resource by kind and name.", "delete", NS + "|kind:s!:Resource kind|name:s!:Resource name"),
 ("scale_deployment", "Change the replica count of a Kubernetes deployment.", "deployments scaling", NS + "|name:s!:Deployment|replicas:i!:Desired replicas"),
 ("rollout_restart", "Restart all pods of a Kubernetes deployment with a rolling update.", "deployments", NS + "|name:s!:Deployment"),
 ("rollout_undo", "Roll a Kubernetes deployment back to its previous revision.", "deployments rollback", NS + "|name:s!:Deployment|to_revision:i:Revision number"),
 ("exec_in_pod", "Run a command inside a container of a Kubernetes pod.", "pods exec", NS + "|pod:s!:Pod name|command:a!:Command and arguments|container:s:Container name"),
 ("port_forward", "Forward a local port to a port on a Kubernetes pod or service.", "networking", NS + "|resource:s!:pod/name or svc/name|local_port:i!:Local port|remote_port:i!:Target port"),
 ("list_events", "List recent Kubernetes events in a namespace, warnings first.", "events", NS + "|warnings_only:b:Only Warning events"),
 ("list_namespaces", "List the namespaces in the Kubernetes cluster.", "namespaces", ""),
 ("get_contexts", "List kubeconfig contexts and show the current one.", "config", ""),
 ("switch_context", "Change the active kubeconfig context (cluster).", "config", "context:s!:Context name"),
 ("top_pods", "Show CPU and memory usage of Kubernetes pods.", "pods metrics", NS),
 ("helm_install", "Install or upgrade a Helm chart release in the cluster.", "helm deploy", "release:s!:Release name|chart:s!:Chart reference|" + NS + "|values:o:Chart values"),
 ("helm_list", "List Helm releases in the cluster.", "helm", NS + "|all_namespaces:b:All namespaces"),
])

srv("docker", ["containers", "devops", "local"], [
 ("list_containers", "List Docker containers on the host, running or all.", "containers", "all:b:Include stopped containers"),
 ("run_container", "Create and start a Docker container from an image.", "containers", "image:s!:Image reference|name:s:Container name|ports:a:Port mappings like 8080:80|env:a:KEY=VALUE pairs|detach:b:Run in background|command:a:Command override"),
 ("stop_container", "Stop a running Docker container.", "containers", "container:s!:Name or ID"),
 ("start_container", "Start a stopped Docker container.", "containers", "container:s!:Name or ID"),
 ("remove_container", "Remove a Docker container.", "containers delete", "container:s!:Name or ID|force:b:Kill it first if running"),
 ("container_logs", "Show the output logs of a Docker container.", "logs", "container:s!:Name or ID|tail:i:Last N lines|since:s:Only logs since this time"),
 ("exec", "Run a command in a running Docker container.", "exec", "container:s!:Name or ID|command:a!:Command and arguments"),
 ("list_images", "List Docker images stored locally with tags and sizes.", "images", ""),
 ("pull_image", "Pull a Docker image from a registry.", "images", "image:s!:Image reference such as redis:7"),
 ("build_image", "Build a Docker image from a Dockerfile.", "images build", "context_path:s!:Build context directory|tag:s!:Image tag|dockerfile:s:Dockerfile path"),
 ("remove_image", "Delete a local Docker image.", "images delete", "image:s!:Image reference|force:b:Force removal"),
 ("compose_up", "Start the services defined in a docker compose file.", "compose", "project_dir:s!:Directory with compose.yaml|services:a:Only these services|build:b:Rebuild images first"),
 ("compose_down", "Stop and remove the services of a docker compose project.", "compose", "project_dir:s!:Directory with compose.yaml|volumes:b:Also remove volumes"),
 ("container_stats", "Show live CPU, memory and network usage of Docker containers.", "metrics", "container:s:Name or ID; all if omitted"),
 ("list_volumes", "List Docker volumes.", "volumes", ""),
 ("prune", "Remove unused Docker containers, images, networks and build cache.", "cleanup", "volumes:b:Also remove unused volumes"),
])

srv("aws", ["cloud", "aws"], [
 ("ec2_list_instances", "List EC2 instances with state, type and IP addresses.", "ec2 compute", "region:s:AWS region|state:s:running, stopped..."),
 ("ec2_stop_instance", "Stop an EC2 instance.", "ec2 compute", "instance_id:s!:Instance ID|region:s:AWS region"),
 ("lambda_invoke", "Invoke an AWS Lambda function with a JSON payload and return its response.", "lambda serverless", "function_name:s!:Function name or ARN|payload:o:Event payload"),
 ("lambda_list_functions", "List AWS Lambda functions with runtime and last modified time.", "lambda serverless", "region:s:AWS region"),
 ("cloudwatch_get_logs", "Query CloudWatch Logs for a log group over a time range.", "logs monitoring", "log_group:s!:Log group name|filter_pattern:s:Filter pattern|start_time:s:ISO 8601 start|end_time:s:ISO 8601 end"),
 ("cost_explorer", "Report AWS spending grouped by service for a period.", "billing cost", "start:s!:Start date|end:s!:End date|granularity:s:DAILY or MONTHLY"),
])

srv("vercel", ["deploy", "hosting", "frontend"], [
 ("list_deployments", "List recent Vercel deployments of a project with state and URL.", "deployments", "project:s:Project name|limit:i:Limit"),
 ("get_deployment_logs", "Read build and runtime logs of a Vercel deployment.", "logs", "deployment_id:s!:Deployment ID or URL"),
 ("create_deployment", "Trigger a new Vercel deployment of a project from a git ref.", "deployments", "project:s!:Project name|ref:s:Git branch or commit|target:s:production or preview"),
 ("set_env_var", "Add or update an environment variable on a Vercel project.", "config", "project:s!:Project|key:s!:Variable name|value:s!:Value|target:a:production, preview, development"),
])

srv("cloudflare", ["cdn", "dns", "hosting"], [
 ("list_dns_records", "List DNS records of a Cloudflare zone.", "dns", "zone_id:s!:Zone ID|type:s:Record type like A or CNAME"),
 ("create_dns_record", "Create a DNS record in a Cloudflare zone.", "dns", "zone_id:s!:Zone ID|type:s!:Record type|name:s!:Host name|content:s!:Value such as an IP|proxied:b:Proxy through Cloudflare"),
 ("purge_cache", "Purge cached files from Cloudflare's CDN, all or by URL.", "cache", "zone_id:s!:Zone ID|urls:a:URLs to purge; everything if omitted"),
])

srv("brave_search", ["web", "search"], [
 ("web_search", "Search the public web and return titles, URLs and snippets.", "", "query:s!:Search terms|count:i:Number of results|freshness:s:pd, pw, pm for past day, week, month"),
 ("news_search", "Search recent news articles on the web.", "news", "query:s!:Search terms|count:i:Number of results"),
 ("local_search", "Find local businesses and places with addresses, ratings and hours.", "local places", "query:s!:What and where, e.g. 'pizza near Union Square'|count:i:Results"),
 ("image_search", "Search the web for images.", "images", "query:s!:Search terms|count:i:Results"),
])

srv("fetch", ["web", "http"], [
 ("fetch_url", "Download a web page and return its main content converted to Markdown.", "scrape", "url:s!:URL to fetch|max_length:i:Maximum characters|start_index:i:Character offset for continuing"),
 ("fetch_raw", "Fetch a URL and return the raw response body without conversion.", "http", "url:s!:URL|headers:o:Extra request headers"),
 ("http_request", "Send an arbitrary HTTP request (any method, headers, body) and return status, headers and body.", "http api", "method:s!:GET, POST, PUT, PATCH, DELETE|url:s!:URL|headers:o:Headers|body:s:Request body"),
])

srv("wikipedia", ["web", "reference", "knowledge"], [
 ("search", "Search Wikipedia article titles.", "search", "query:s!:Search terms|language:s:Wiki language code"),
 ("get_article", "Get the text or summary of a Wikipedia article.", "read", "title:s!:Article title|summary_only:b:Only the lead section"),
])

srv("arxiv", ["research", "papers"], [
 ("search_papers", "Search arXiv for research papers by keywords, author or category.", "search", "query:s!:Search terms|max_results:i:Limit|category:s:Category like cs.LG"),
 ("download_paper", "Download an arXiv paper's PDF and extract its text.", "read", "paper_id:s!:arXiv ID such as 2401.01234"),
])

srv("youtube", ["video", "media"], [
 ("get_transcript", "Get the caption transcript of a YouTube video.", "transcripts", "url:s!:Video URL or ID|language:s:Caption language"),
 ("search_videos", "Search YouTube for videos.", "search", "query:s!:Search terms|max_results:i:Limit"),
])

srv("maps", ["geo", "location"], [
 ("geocode", "Convert a street address or place name into latitude and longitude.", "geocoding", "address:s!:Address or place"),
 ("reverse_geocode", "Convert latitude and longitude into the nearest street address.", "geocoding", "latitude:n!:Latitude|longitude:n!:Longitude"),
 ("search_places", "Find places such as restaurants or shops near a location.", "places", "query:s!:What to look for|location:s:Center as 'lat,lng' or a place name|radius_m:i:Search radius in metres"),
 ("place_details", "Get a place's opening hours, phone, website, rating and reviews.", "places", "place_id:s!:Place ID"),
 ("directions", "Get a route and turn-by-turn directions between two places by car, transit, bike or foot.", "routing", "origin:s!:Start|destination:s!:End|mode:s:driving, walking, bicycling or transit|departure_time:s:When to leave"),
 ("distance_matrix", "Compute travel times and distances between several origins and destinations.", "routing", "origins:a!:Start points|destinations:a!:End points|mode:s:Travel mode"),
 ("elevation", "Get the elevation above sea level of points.", "terrain", "locations:a!:Points as 'lat,lng'"),
 ("timezone_at", "Find the time zone in force at a latitude and longitude.", "timezone", "latitude:n!:Latitude|longitude:n!:Longitude"),
])

srv("weather", ["weather", "forecast"], [
 ("current", "Get the current weather conditions at a location: temperature, wind, humidity, sky.", "", "location:s!:City name or 'lat,lng'|units:s:metric or imperial"),
 ("forecast", "Get a daily or hourly weather forecast for the coming days.", "", "location:s!:City name or 'lat,lng'|days:i:Number of days, up to 14|hourly:b:Hourly rather than daily"),
 ("alerts", "List active severe weather alerts for a region.", "warnings", "area:s!:State code or region"),
 ("air_quality", "Get air quality index and pollutant levels at a location.", "air", "location:s!:City or 'lat,lng'"),
 ("historical", "Get past weather observations for a location and date.", "history", "location:s!:City or 'lat,lng'|date:s!:YYYY-MM-DD"),
])

srv("stripe", ["payments", "billing", "finance"], [
 ("create_customer", "Create a Stripe customer record with email and name.", "customers", "email:s!:Customer email|name:s:Full name|metadata:o:Extra key-values"),
 ("list_customers", "List or look up Stripe customers, optionally by email.", "customers", "email:s:Email filter|limit:i:Limit"),
 ("create_payment_link", "Create a shareable Stripe payment link for a price.", "checkout", "price_id:s!:Price ID|quantity:i:Quantity"),
 ("create_invoice", "Create a draft Stripe invoice for a customer.", "invoices", "customer_id:s!:Customer ID|days_until_due:i:Payment terms in days|description:s:Memo"),
 ("add_invoice_item", "Add a line item to a customer's pending Stripe invoice.", "invoices", "customer_id:s!:Customer ID|price_id:s!:Price ID|invoice_id:s:Invoice to add to"),
 ("finalize_invoice", "Finalize a draft Stripe invoice so it can be paid, and send it.", "invoices", "invoice_id:s!:Invoice ID|send:b:Email it to the customer"),
 ("list_invoices", "List Stripe invoices by customer or status.", "invoices", "customer_id:s:Customer filter|status:s:draft, open, paid, void"),
 ("create_refund", "Refund a Stripe payment fully or partly.", "refunds", "payment_intent_id:s!:Payment to refund|amount:i:Amount in the smallest currency unit; full if omitted|reason:s:duplicate, fraudulent or requested_by_customer"),
 ("list_payment_intents", "List recent Stripe payments with amount and status.", "payments", "customer_id:s:Customer filter|limit:i:Limit"),
 ("create_product", "Create a product in the Stripe catalog.", "catalog", "name:s!:Product name|description:s:Description"),
 ("create_price", "Create a one-off or recurring price for a Stripe product.", "catalog", "product_id:s!:Product ID|unit_amount:i!:Amount in smallest currency unit|currency:s!:Three-letter currency|recurring_interval:s:day, week, month or year"),
 ("list_subscriptions", "List Stripe subscriptions by customer or status.", "subscriptions", "customer_id:s:Customer filter|status:s:active, past_due, canceled..."),
 ("cancel_subscription", "Cancel a Stripe subscription now or at period end.", "subscriptions", "subscription_id:s!:Subscription ID|at_period_end:b:Let it run to the end of the period"),
 ("retrieve_balance", "Show the Stripe account's available and pending balance.", "balance", ""),
 ("list_disputes", "List Stripe payment disputes (chargebacks).", "disputes", "status:s:Status filter"),
])

srv("paypal", ["payments", "finance"], [
 ("create_invoice", "Create and optionally send a PayPal invoice.", "invoices", "recipient_email:s!:Payer email|items:a!:Line items as JSON strings|currency:s!:Currency code|send:b:Send it now"),
 ("list_transactions", "List PayPal account transactions in a date range.", "transactions", "start_date:s!:Start|end_date:s!:End"),
 ("refund_capture", "Refund a captured PayPal payment.", "refunds", "capture_id:s!:Capture ID|amount:s:Partial amount"),
])

srv("shopify", ["ecommerce", "store"], [
 ("list_orders", "List Shopify store orders by status or date.", "orders", "status:s:open, closed, cancelled, any|created_at_min:s:ISO 8601 lower bound|limit:i:Limit"),
 ("get_order", "Get one Shopify order with line items, customer and fulfilment.", "orders", "order_id:s!:Order ID"),
 ("list_products", "List products in the Shopify store.", "products", "query:s:Title filter|limit:i:Limit"),
 ("update_inventory", "Set the stock level of a Shopify product variant at a location.", "inventory", "inventory_item_id:s!:Inventory item|location_id:s!:Location|available:i!:New quantity"),
 ("create_discount_code", "Create a Shopify discount code.", "marketing", "code:s!:Code customers type|percentage:n:Percent off|amount:n:Fixed amount off|ends_at:s:Expiry"),
])

srv("memory", ["knowledge-graph", "memory"], [
 ("create_entities", "Add new entities (people, projects, concepts) with types and observations to the knowledge graph.", "entities", "entities:a!:Entities as JSON strings with name, entityType and observations"),
 ("create_relations", "Record directed relations between entities in the knowledge graph, like 'Ana works_at Acme'.", "relations", "relations:a!:Relations as JSON strings with from, to and relationType"),
 ("add_observations", "Attach new facts to existing entities in the knowledge graph.", "observations", "observations:a!:Items as JSON strings with entityName and contents"),
 ("delete_entities", "Remove entities and their relations from the knowledge graph.", "entities delete", "entity_names:a!:Names to remove"),
 ("delete_observations", "Remove specific facts from entities in the knowledge graph.", "observations delete", "deletions:a!:Items as JSON strings with entityName and observations"),
 ("delete_relations", "Remove relations between entities from the knowledge graph.", "relations delete", "relations:a!:Relations to remove"),
 ("read_graph", "Return the whole knowledge graph: all entities and relations.", "read", ""),
 ("search_nodes", "Search the knowledge graph for entities whose names, types or facts match a query.", "search", "query:s!:Search text"),
 ("open_nodes", "Fetch specific entities from the knowledge graph by name with their relations.", "read", "names:a!:Entity names"),
])

srv("vector_memory", ["memory", "embeddings", "rag"], [
 ("store", "Save a piece of text in long-term semantic memory with optional metadata.", "write", "text:s!:Text to remember|metadata:o:Tags or source"),
 ("recall", "Retrieve stored memories most similar in meaning to a query.", "search", "query:s!:What to look for|top_k:i:How many results"),
 ("forget", "Delete a stored memory by ID.", "delete", "memory_id:s!:Memory ID"),
])

srv("time", ["time", "timezone"], [
 ("get_current_time", "Return the current date and time in an IANA time zone.", "now", "timezone:s!:IANA zone such as Europe/Paris"),
 ("convert_time", "Convert a time of day from one time zone to another.", "conversion", "source_timezone:s!:Zone of the given time|time:s!:Time as HH:MM|target_timezone:s!:Zone to convert to"),
 ("date_diff", "Compute the number of days, hours or business days between two dates.", "arithmetic", "start:s!:Start date|end:s!:End date|unit:s:days, hours or business_days"),
])

srv("sentry", ["errors", "monitoring", "observability"], [
 ("list_issues", "List Sentry error issues for a project, sorted by frequency or recency.", "issues", "organization:s!:Organisation slug|project:s!:Project slug|query:s:Sentry search like is:unresolved|sort:s:date, freq, new|stats_period:s:24h, 14d..."),
 ("get_issue", "Get a Sentry issue's details: title, culprit, event count, first and last seen.", "issues", "issue_id:s!:Issue ID or short ID like WEB-3F"),
 ("get_latest_event", "Get the most recent event of a Sentry issue with stack trace, breadcrumbs and tags.", "events stacktrace", "issue_id:s!:Issue ID"),
 ("resolve_issue", "Mark a Sentry issue as resolved, optionally in the next release.", "issues", "issue_id:s!:Issue ID|in_next_release:b:Resolve in next release"),
 ("ignore_issue", "Ignore (mute) a Sentry issue until a condition is met.", "issues", "issue_id:s!:Issue ID|ignore_duration_minutes:i:Mute for this long"),
 ("assign_issue", "Assign a Sentry issue to a user or team.", "issues", "issue_id:s!:Issue ID|assignee:s!:User email or team:slug"),
 ("list_releases", "List releases known to Sentry for a project with crash-free rates.", "releases", "organization:s!:Organisation slug|project:s:Project slug"),
 ("search_events", "Search Sentry error and transaction events with a query and fields.", "events search", "organization:s!:Organisation slug|query:s!:Discover query|fields:a:Columns to return|stats_period:s:Time window"),
 ("list_projects", "List the projects in a Sentry organisation.", "projects", "organization:s!:Organisation slug"),
])

srv("datadog", ["monitoring", "observability", "metrics"], [
 ("query_metrics", "Query Datadog time-series metrics for a time window.", "metrics", "query:s!:Metric query such as avg:system.cpu.user{service:api}|from:s!:Start time|to:s!:End time"),
 ("search_logs", "Search Datadog logs with a query over a time window.", "logs", "query:s!:Log query such as service:api status:error|from:s!:Start|to:s!:End|limit:i:Limit"),
 ("list_monitors", "List Datadog monitors and their alert state.", "alerts", "state:s:Alert, Warn, OK|tags:a:Tag filter"),
 ("mute_monitor", "Mute a Datadog monitor for a period.", "alerts", "monitor_id:i!:Monitor ID|end:s:When to unmute"),
 ("list_incidents", "List Datadog incidents.", "incidents", "status:s:active, stable, resolved"),
])

srv("grafana", ["monitoring", "observability", "dashboards"], [
 ("search_dashboards", "Find Grafana dashboards by title or tag.", "dashboards", "query:s!:Title text|tags:a:Tag filter"),
 ("query_prometheus", "Run a PromQL query through a Grafana Prometheus data source.", "metrics promql", "datasource_uid:s!:Data source|expr:s!:PromQL expression|start:s:Range start|end:s:Range end|step:s:Resolution"),
 ("query_loki", "Run a LogQL query through a Grafana Loki data source.", "logs logql", "datasource_uid:s!:Data source|expr:s!:LogQL expression|limit:i:Lines"),
 ("list_alert_rules", "List Grafana alert rules and their firing state.", "alerts", ""),
])

srv("pagerduty", ["incidents", "on-call"], [
 ("list_incidents", "List PagerDuty incidents by status, service or urgency.", "incidents", "statuses:a:triggered, acknowledged, resolved|service_ids:a:Services|urgency:s:high or low"),
 ("acknowledge_incident", "Acknowledge a PagerDuty incident so escalation stops.", "incidents", "incident_id:s!:Incident ID"),
 ("resolve_incident", "Resolve a PagerDuty incident.", "incidents", "incident_id:s!:Incident ID|note:s:Resolution note"),
 ("get_oncall", "Show who is on call now for a PagerDuty schedule or escalation policy.", "on-call schedules", "schedule_id:s:Schedule ID|escalation_policy_id:s:Policy ID"),
 ("create_incident", "Trigger a new PagerDuty incident on a service.", "incidents", "service_id:s!:Service ID|title:s!:Incident title|urgency:s:high or low|details:s:Body"),
])

srv("zoom", ["video", "meetings"], [
 ("create_meeting", "Schedule a Zoom meeting and return the join link.", "meetings", "topic:s!:Meeting topic|start_time:s:ISO 8601 start; instant if omitted|duration_minutes:i:Length|password:s:Passcode"),
 ("list_meetings", "List the user's upcoming Zoom meetings.", "meetings", "type:s:upcoming, scheduled, live"),
 ("get_recording", "Get recording files and transcript of a past Zoom meeting.", "recordings", "meeting_id:s!:Meeting ID"),
])

srv("twilio", ["sms", "telephony", "messaging"], [
 ("send_sms", "Send an SMS text message to a phone number.", "sms", "to:s!:E.164 phone number|body:s!:Message text|from:s:Sender number"),
 ("list_messages", "List SMS messages sent or received on the Twilio account.", "sms", "to:s:Filter by recipient|from:s:Filter by sender|date_sent:s:YYYY-MM-DD"),
 ("make_call", "Place an outbound phone call that plays a message.", "voice", "to:s!:E.164 number|message:s!:Text to speak"),
])

srv("hubspot", ["crm", "sales"], [
 ("search_contacts", "Search HubSpot CRM contacts by name, email or company.", "contacts", "query:s!:Search text|limit:i:Limit"),
 ("create_contact", "Add a contact to HubSpot CRM.", "contacts", "email:s!:Email|first_name:s:First name|last_name:s:Last name|company:s:Company"),
 ("create_deal", "Create a sales deal in a HubSpot pipeline.", "deals", "name:s!:Deal name|amount:n:Value|stage:s!:Pipeline stage|contact_id:s:Associated contact"),
 ("list_deals", "List HubSpot deals by stage or owner.", "deals", "stage:s:Stage filter|owner_id:s:Owner filter"),
 ("log_activity", "Log a call, email or meeting note on a HubSpot contact's timeline.", "activities", "contact_id:s!:Contact|type:s!:call, email, meeting or note|body:s!:Notes"),
])

srv("salesforce", ["crm", "sales"], [
 ("soql_query", "Run a SOQL query against Salesforce records.", "query", "soql:s!:SOQL statement"),
 ("create_record", "Create a Salesforce record such as a Lead, Account or Opportunity.", "records", "object_type:s!:sObject name|fields:o!:Field values"),
 ("update_record", "Update fields of a Salesforce record.", "records", "object_type:s!:sObject name|record_id:s!:Record ID|fields:o!:Field values"),
])

srv("zendesk", ["support", "helpdesk"], [
 ("list_tickets", "List Zendesk support tickets by status or requester.", "tickets", "status:s:new, open, pending, solved|requester_email:s:Requester filter"),
 ("get_ticket", "Read a Zendesk ticket with its full conversation.", "tickets", "ticket_id:i!:Ticket ID"),
 ("reply_ticket", "Reply to a Zendesk ticket publicly or as an internal note.", "tickets", "ticket_id:i!:Ticket ID|body:s!:Reply text|public:b:Visible to the customer|status:s:New status"),
 ("search_help_center", "Search Zendesk help center articles.", "knowledge-base", "query:s!:Search text"),
])

srv("figma", ["design"], [
 ("get_file", "Get the document tree of a Figma file: pages, frames and components.", "files", "file_key:s!:Figma file key"),
 ("export_images", "Render Figma nodes to PNG, SVG or PDF images.", "export", "file_key:s!:File key|node_ids:a!:Nodes to render|format:s:png, svg or pdf|scale:n:Scale factor"),
 ("get_comments", "List comments left on a Figma file.", "comments", "file_key:s!:File key"),
])

srv("spotify", ["music", "media"], [
 ("search", "Search Spotify for tracks, albums, artists or playlists.", "search", "query:s!:Search text|type:s:track, album, artist or playlist"),
 ("play", "Start or resume playback on the active Spotify device, optionally of a track or playlist.", "playback", "uri:s:Spotify URI to play"),
 ("pause", "Pause Spotify playback.", "playback", ""),
 ("add_to_playlist", "Add tracks to a Spotify playlist.", "playlists", "playlist_id:s!:Playlist ID|uris:a!:Track URIs"),
])

srv("translate", ["language", "translation"], [
 ("translate_text", "Translate text into another language, detecting the source language if not given.", "", "text:s!:Text to translate|target_language:s!:Target language code|source_language:s:Source language code"),
 ("detect_language", "Identify the language a text is written in.", "", "text:s!:Text to analyse"),
])

srv("python_sandbox", ["code-execution", "python"], [
 ("run_python", "Execute Python code in an isolated sandbox and return stdout, stderr and result.", "execute", "code:s!:Python source|timeout_seconds:i:Time limit"),
 ("install_package", "Install a pip package into the sandbox environment.", "packages", "package:s!:Package name and optional version"),
])

srv("shell", ["terminal", "local"], [
 ("run_command", "Run a shell command on the local machine and return its output and exit code.", "execute", "command:s!:Command line|cwd:s:Working directory|timeout_seconds:i:Time limit"),
 ("list_processes", "List running processes with PID, CPU and memory use.", "processes", "filter:s:Name filter"),
 ("kill_process", "Terminate a process by PID.", "processes", "pid:i!:Process ID|signal:s:Signal name, TERM by default"),
])

srv("npm_registry", ["packages", "javascript"], [
 ("package_info", "Look up an npm package: latest version, description, dependencies and weekly downloads.", "", "name:s!:Package name"),
 ("search_packages", "Search the npm registry for packages.", "search", "query:s!:Search text"),
])

srv("pypi", ["packages", "python"], [
 ("package_info", "Look up a PyPI package's latest version, summary and release history.", "", "name:s!:Package name"),
])

srv("exchange_rates", ["finance", "currency"], [
 ("convert_currency", "Convert an amount between currencies at the current exchange rate.", "conversion", "amount:n!:Amount|from:s!:Source currency code|to:s!:Target currency code"),
 ("historical_rate", "Get the exchange rate between two currencies on a past date.", "history", "from:s!:Source currency|to:s!:Target currency|date:s!:YYYY-MM-DD"),
])

srv("stocks", ["finance", "markets"], [
 ("quote", "Get the latest price and daily change for a stock ticker.", "", "symbol:s!:Ticker symbol"),
 ("price_history", "Get daily closing prices of a stock over a period.", "history", "symbol:s!:Ticker|start:s!:Start date|end:s:End date"),
])

srv("flights", ["travel"], [
 ("search_flights", "Search flight offers between two airports on given dates.", "search", "origin:s!:IATA code|destination:s!:IATA code|depart_date:s!:YYYY-MM-DD|return_date:s:YYYY-MM-DD|adults:i:Passengers"),
 ("flight_status", "Get the live status (delays, gate) of a flight by number.", "status", "flight_number:s!:Carrier and number, e.g. LH400|date:s:YYYY-MM-DD"),
])

srv("image_gen", ["images", "ai", "media"], [
 ("generate_image", "Generate an image from a text prompt and save it.", "generate", "prompt:s!:What to draw|size:s:Dimensions like 1024x1024|output_path:s:Where to save it"),
 ("edit_image", "Modify an existing image according to an instruction.", "edit", "image_path:s!:Source image|instruction:s!:Change to make"),
])

srv("pdf", ["documents", "local"], [
 ("extract_text", "Extract the text of a PDF file, optionally for a page range.", "read", "path:s!:PDF file|pages:s:Range like 1-5"),
 ("merge", "Combine several PDF files into one.", "write", "inputs:a!:PDF paths in order|output:s!:Result path"),
 ("fill_form", "Fill the form fields of a PDF and save a copy.", "forms", "path:s!:PDF with form|values:o!:Field name to value|output:s!:Result path"),
])

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "tools.json"
    with open(out, "w") as f:
        json.dump(TOOLS, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(len(TOOLS), "tools")
