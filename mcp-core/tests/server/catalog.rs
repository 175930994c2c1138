//! `server::Catalog`: registration rules, order, pagination, caching hints, list changes,
//! prompt checks and completion

use mcp_sansio::ProtocolVersion;
use mcp_sansio::jsonrpc::code;
use mcp_sansio::schema::{
    CacheScope, FitVersion, PaginatedParams, Prompt, PromptArgument, ReadResourceResult, Resource,
    ResourceContents, Tool,
};
use mcp_sansio::server::{
    CachePolicy, Catalog, CatalogConfig, CatalogError, EntryKind, ListChanges, Order,
    check_tool_name, complete,
};
use serde_json::{Map, Value, json};

fn object_schema() -> Map<String, Value> {
    json!({"type": "object"}).as_object().unwrap().clone()
}

fn tool(name: &str) -> Tool {
    Tool::new(name, object_schema())
}

fn catalog_with_page_size(page_size: usize) -> Catalog {
    let mut config = CatalogConfig::new();
    config.page_size = page_size;
    Catalog::new(config)
}

fn names(catalog: &Catalog, cursor: Option<&str>) -> (Vec<String>, Option<String>) {
    let params = cursor.map_or_else(PaginatedParams::new, PaginatedParams::at);
    let page = catalog.list_tools(&params).unwrap();
    (
        page.tools.into_iter().map(|t| t.name).collect(),
        page.next_cursor,
    )
}

fn all_pages(catalog: &Catalog) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let (page, next) = names(catalog, cursor.as_deref());
        pages.push(page);
        match next {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
    }
}

#[test]
fn tool_names_follow_the_naming_rule() {
    let long_ok = "a".repeat(128);
    let too_long = "a".repeat(129);
    let valid = [
        "getUser",
        "DATA_EXPORT_v2",
        "admin.tools.list",
        "user-profile",
        "a",
        "0",
        long_ok.as_str(),
    ];
    let invalid = [
        ("", "is empty"),
        (too_long.as_str(), "longer than 128"),
        ("get user", "' '"),
        ("a,b", "','"),
        ("user-profile/update", "'/'"),
        ("naïve", "'ï'"),
        ("tab\tname", "'\\t'"),
        ("emoji😀", "'😀'"),
    ];
    for name in valid {
        assert!(check_tool_name(name).is_ok(), "{name:?}");
        let mut catalog = Catalog::default();
        catalog.add_tool(tool(name)).unwrap();
    }
    for (name, why) in invalid {
        let reason = check_tool_name(name).unwrap_err();
        assert!(reason.contains(why), "{name:?}: {reason}");
        let mut catalog = Catalog::default();
        match catalog.add_tool(tool(name)) {
            Err(CatalogError::InvalidToolName { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name:?}: {other:?}"),
        }
        assert_eq!(catalog.tools().count(), 0);
    }
    // Names are case-sensitive: these are two tools.
    let mut catalog = Catalog::default();
    catalog.add_tool(tool("Echo")).unwrap();
    catalog.add_tool(tool("echo")).unwrap();
    assert_eq!(catalog.tools().count(), 2);
}

#[test]
fn duplicates_are_refused_and_leave_the_first() {
    let mut catalog = Catalog::default();
    catalog
        .add_tool(tool("echo").with_description("first"))
        .unwrap();
    let error = catalog
        .add_tool(tool("echo").with_description("second"))
        .unwrap_err();
    assert_eq!(
        error,
        CatalogError::Duplicate {
            kind: EntryKind::Tool,
            key: "echo".into()
        }
    );
    assert_eq!(error.to_string(), "tool \"echo\" is already registered");
    assert_eq!(
        catalog.tool("echo").unwrap().description.as_deref(),
        Some("first")
    );

    catalog
        .add_resource(Resource::new("test://a", "a"))
        .unwrap();
    assert!(matches!(
        catalog.add_resource(Resource::new("test://a", "again")),
        Err(CatalogError::Duplicate {
            kind: EntryKind::Resource,
            ..
        })
    ));
    catalog.add_prompt(Prompt::new("p")).unwrap();
    assert!(matches!(
        catalog.add_prompt(Prompt::new("p")),
        Err(CatalogError::Duplicate {
            kind: EntryKind::Prompt,
            ..
        })
    ));
    assert!(matches!(
        catalog.add_resource(Resource::new("", "empty")),
        Err(CatalogError::EmptyKey { .. })
    ));
    // Remove, then register again: allowed.
    assert!(catalog.remove_tool("echo"));
    assert!(!catalog.remove_tool("echo"));
    catalog.add_tool(tool("echo")).unwrap();
}

#[test]
fn input_schema_must_be_an_object_schema() {
    let mut catalog = Catalog::default();
    let mut bad = tool("t");
    bad.input_schema = json!({"type": "string"}).as_object().unwrap().clone();
    assert_eq!(
        catalog.add_tool(bad).unwrap_err(),
        CatalogError::InputSchemaNotObject { tool: "t".into() }
    );
    let mut missing = tool("t");
    missing.input_schema.remove("type");
    assert!(matches!(
        catalog.add_tool(missing),
        Err(CatalogError::InputSchemaNotObject { .. })
    ));
    let mut invalid = tool("t");
    invalid
        .input_schema
        .insert("properties".into(), json!({"x": {"type": 12}}));
    match catalog.add_tool(invalid).unwrap_err() {
        error @ CatalogError::InvalidSchema { .. } => {
            assert!(
                error.to_string().starts_with("tool \"t\": invalid schema"),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(catalog.tool("t").is_none());
}

#[test]
fn lists_are_sorted_by_key_whatever_the_registration_order() {
    let mut catalog = Catalog::default();
    for name in ["zeta", "Alpha", "beta", "alpha", "_x", "9"] {
        catalog.add_tool(tool(name)).unwrap();
    }
    for uri in ["test://static-text", "test://static-binary", "file:///a"] {
        catalog.add_resource(Resource::new(uri, "r")).unwrap();
    }
    let (page, next) = names(&catalog, None);
    assert_eq!(page, ["9", "Alpha", "_x", "alpha", "beta", "zeta"]);
    assert!(next.is_none());
    // The same answer every time.
    assert_eq!(names(&catalog, None).0, page);
    let uris: Vec<_> = catalog
        .list_resources(&PaginatedParams::new())
        .unwrap()
        .resources
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(
        uris,
        ["file:///a", "test://static-binary", "test://static-text"]
    );
}

#[test]
fn registration_order_is_available() {
    let mut config = CatalogConfig::new();
    config.order = Order::Registration;
    config.page_size = 2;
    let mut catalog = Catalog::new(config);
    for name in ["test_simple_text", "json_schema_tool", "another"] {
        catalog.add_tool(tool(name)).unwrap();
    }
    assert_eq!(
        all_pages(&catalog),
        [
            vec!["test_simple_text", "json_schema_tool"],
            vec!["another"]
        ]
    );
    // Removing and adding again moves a tool to the end.
    catalog.remove_tool("test_simple_text");
    catalog.add_tool(tool("test_simple_text")).unwrap();
    assert_eq!(
        all_pages(&catalog).concat(),
        ["json_schema_tool", "another", "test_simple_text"]
    );
}

#[test]
fn pages_cover_every_tool_once() {
    let mut catalog = catalog_with_page_size(3);
    for i in 0..10 {
        catalog.add_tool(tool(&format!("tool{i:02}"))).unwrap();
    }
    let pages = all_pages(&catalog);
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 3, 1]);
    let all: Vec<String> = pages.concat();
    let expected: Vec<String> = (0..10).map(|i| format!("tool{i:02}")).collect();
    assert_eq!(all, expected);
}

#[test]
fn page_size_edges() {
    // No tools: one empty page, no cursor.
    let catalog = catalog_with_page_size(3);
    assert_eq!(names(&catalog, None), (vec![], None));

    // Exactly one page: no cursor.
    let mut catalog = catalog_with_page_size(3);
    for name in ["a", "b", "c"] {
        catalog.add_tool(tool(name)).unwrap();
    }
    assert_eq!(
        names(&catalog, None),
        (vec!["a".into(), "b".into(), "c".into()], None)
    );

    // One more than a page: a second page of one.
    catalog.add_tool(tool("d")).unwrap();
    assert_eq!(all_pages(&catalog), [vec!["a", "b", "c"], vec!["d"]]);

    // Page size 0 counts as 1.
    let mut catalog = catalog_with_page_size(0);
    for name in ["a", "b", "c", "d"] {
        catalog.add_tool(tool(name)).unwrap();
    }
    assert_eq!(all_pages(&catalog).len(), 4);

    // The default is 100.
    let mut catalog = Catalog::default();
    assert_eq!(catalog.config().page_size, 100);
    for i in 0..101 {
        catalog.add_tool(tool(&format!("t{i:03}"))).unwrap();
    }
    let pages = all_pages(&catalog);
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [100, 1]);
}

#[test]
fn removals_between_pages_neither_skip_nor_repeat() {
    let mut catalog = catalog_with_page_size(2);
    for name in ["a", "b", "c", "d", "e", "f"] {
        catalog.add_tool(tool(name)).unwrap();
    }
    let (first, cursor) = names(&catalog, None);
    assert_eq!(first, ["a", "b"]);
    // The last tool returned and the next one both go away.
    assert!(catalog.remove_tool("b"));
    assert!(catalog.remove_tool("c"));
    let (second, cursor) = names(&catalog, cursor.as_deref());
    assert_eq!(second, ["d", "e"]);
    assert!(catalog.remove_tool("e"));
    let (third, cursor) = names(&catalog, cursor.as_deref());
    assert_eq!(third, ["f"]);
    assert!(cursor.is_none());
}

#[test]
fn a_cursor_for_the_last_page_survives_removal_of_everything_after_it() {
    let mut catalog = catalog_with_page_size(1);
    for name in ["a", "b"] {
        catalog.add_tool(tool(name)).unwrap();
    }
    let (_, cursor) = names(&catalog, None);
    catalog.remove_tool("b");
    assert_eq!(names(&catalog, cursor.as_deref()), (vec![], None));
}

#[test]
fn bad_cursors_are_invalid_params() {
    let mut catalog = catalog_with_page_size(1);
    for name in ["a", "b"] {
        catalog.add_tool(tool(name)).unwrap();
        catalog.add_prompt(Prompt::new(name)).unwrap();
    }
    let (_, tool_cursor) = names(&catalog, None);
    let tool_cursor = tool_cursor.unwrap();
    for bad in ["", "zz", "abc", "not a cursor", "6e6f", "DEADBEEF"] {
        let error = catalog.list_tools(&PaginatedParams::at(bad)).unwrap_err();
        assert_eq!(error.code, code::INVALID_PARAMS, "{bad:?}");
        assert_eq!(error.message, "Invalid cursor");
    }
    // A tools cursor is not a prompts cursor.
    let error = catalog
        .list_prompts(&PaginatedParams::at(tool_cursor.clone()))
        .unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert!(
        catalog
            .list_tools(&PaginatedParams::at(tool_cursor))
            .is_ok()
    );
}

#[test]
fn caching_hints_are_on_modern_results_only() {
    let mut config = CatalogConfig::new();
    config.cache = CachePolicy::new(60_000, CacheScope::Public);
    let mut catalog = Catalog::new(config);
    catalog.add_tool(tool("t")).unwrap();
    catalog
        .add_resource(Resource::new("test://r", "r"))
        .unwrap();
    catalog.add_prompt(Prompt::new("p")).unwrap();

    for legacy in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_11_25] {
        for (what, old) in cacheable_results(&catalog, legacy) {
            assert!(old.get("ttlMs").is_none(), "{what}: {old}");
            assert!(old.get("cacheScope").is_none(), "{what}: {old}");
            assert!(old.get("resultType").is_none(), "{what}: {old}");
        }
    }
    for (what, modern) in cacheable_results(&catalog, ProtocolVersion::V2026_07_28) {
        assert_eq!(modern["ttlMs"], 60_000, "{what}: {modern}");
        assert_eq!(modern["cacheScope"], "public", "{what}: {modern}");
        assert_eq!(modern["resultType"], "complete", "{what}: {modern}");
    }
}

/// Every result the catalog puts caching hints on, fitted to `version`
fn cacheable_results(catalog: &Catalog, version: ProtocolVersion) -> Vec<(&'static str, Value)> {
    let params = PaginatedParams::new();
    let read = ReadResourceResult::new(vec![ResourceContents::text("test://r", "hi")]);
    vec![
        (
            "tools",
            fitted(catalog.list_tools(&params).unwrap(), version),
        ),
        (
            "resources",
            fitted(catalog.list_resources(&params).unwrap(), version),
        ),
        (
            "templates",
            fitted(catalog.list_resource_templates(&params).unwrap(), version),
        ),
        (
            "prompts",
            fitted(catalog.list_prompts(&params).unwrap(), version),
        ),
        ("read", fitted(catalog.with_read_cache(read), version)),
    ]
}

#[test]
fn cache_policy_defaults_and_read_results_keep_their_own_hints() {
    let catalog = Catalog::default();
    assert_eq!(
        catalog.config().cache,
        CachePolicy::new(0, CacheScope::Private)
    );
    let listed = fitted(
        catalog.list_tools(&PaginatedParams::new()).unwrap(),
        ProtocolVersion::V2026_07_28,
    );
    assert_eq!(listed["ttlMs"], 0);
    assert_eq!(listed["cacheScope"], "private");
    let own = ReadResourceResult::new(vec![]).with_cache(5, CacheScope::Public);
    let kept = catalog.with_read_cache(own);
    assert_eq!(
        (kept.ttl_ms, kept.cache_scope),
        (Some(5), Some(CacheScope::Public))
    );
}

fn fitted<T: FitVersion + serde::Serialize>(mut value: T, version: ProtocolVersion) -> Value {
    value.fit_to(version);
    serde_json::to_value(value).unwrap()
}

#[test]
fn list_changes_are_tracked_per_list() {
    let mut catalog = Catalog::default();
    assert_eq!(catalog.take_changes(), ListChanges::default());
    catalog.add_tool(tool("t")).unwrap();
    let changes = catalog.take_changes();
    assert!(changes.tools && !changes.resources && !changes.prompts);
    assert!(!catalog.take_changes().any(), "taken");

    // Refused registrations and removals of nothing are not changes.
    assert!(catalog.add_tool(tool("t")).is_err());
    assert!(!catalog.remove_prompt("nothing"));
    assert!(!catalog.take_changes().any());

    let before = catalog.revisions();
    catalog
        .add_resource(Resource::new("test://r", "r"))
        .unwrap();
    catalog.add_prompt(Prompt::new("p")).unwrap();
    catalog.remove_prompt("p");
    let changes = catalog.take_changes();
    assert!(!changes.tools && changes.resources && changes.prompts);
    let between = ListChanges::between(before, catalog.revisions());
    assert_eq!(between, changes);
    assert_eq!(catalog.revisions().prompts, before.prompts + 2);
}

#[test]
fn list_changed_notifications_follow_the_capabilities() {
    let mut catalog = Catalog::default();
    catalog.add_tool(tool("t")).unwrap();
    catalog
        .add_resource(Resource::new("test://r", "r"))
        .unwrap();
    catalog.add_prompt(Prompt::new("p")).unwrap();
    let changes = catalog.take_changes();
    let all = json!({
        "tools": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "prompts": {"listChanged": true}
    });
    assert_eq!(
        changes.notifications(&all),
        [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/prompts/list_changed"
        ]
    );
    let some =
        json!({"tools": {"listChanged": false}, "resources": {}, "prompts": {"listChanged": true}});
    assert_eq!(
        changes.notifications(&some),
        ["notifications/prompts/list_changed"]
    );
    assert!(changes.notifications(&json!({})).is_empty());
    assert!(ListChanges::default().notifications(&all).is_empty());
}

#[test]
fn prompt_arguments_are_checked() {
    let mut catalog = Catalog::default();
    catalog
        .add_prompt(Prompt::new("greet").with_arguments(vec![
            PromptArgument::new("name").required(true),
            PromptArgument::new("style"),
        ]))
        .unwrap();
    let args = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(
        catalog
            .check_prompt_args("greet", Some(&args(&[("name", "Ada")])))
            .unwrap()
            .name,
        "greet"
    );
    // Undeclared arguments pass.
    assert!(
        catalog
            .check_prompt_args("greet", Some(&args(&[("name", "Ada"), ("x", "y")])))
            .is_ok()
    );
    for given in [None, Some(args(&[("style", "short")]))] {
        let error = catalog
            .check_prompt_args("greet", given.as_ref())
            .unwrap_err();
        assert_eq!(error.code, code::INVALID_PARAMS);
        assert_eq!(
            error.message,
            "Missing required argument name for prompt greet"
        );
    }
    let error = catalog.check_prompt_args("nope", None).unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert_eq!(error.message, "Unknown prompt: nope");
    assert!(catalog.prompt("greet").is_some());
    assert!(catalog.prompt("nope").is_none());
}

#[test]
fn completion_filters_by_prefix_and_caps_at_100() {
    let candidates: Vec<String> = (0..250).map(|i| format!("item{i:03}")).collect();
    let result = complete("item", &candidates);
    assert_eq!(result.completion.values.len(), 100);
    assert_eq!(result.completion.values[0], "item000");
    assert_eq!(result.completion.total, Some(250));
    assert_eq!(result.completion.has_more, Some(true));

    let result = complete("item1", &candidates);
    assert_eq!(result.completion.values.len(), 100);
    assert_eq!(result.completion.total, Some(100));
    assert_eq!(result.completion.has_more, Some(false));

    let result = complete("item24", &candidates);
    assert_eq!(result.completion.values.len(), 10);
    assert_eq!(result.completion.has_more, Some(false));

    let result = complete("none", &candidates);
    assert!(result.completion.values.is_empty());
    assert_eq!(result.completion.total, Some(0));

    // Case-sensitive.
    assert!(complete("ITEM", &candidates).completion.values.is_empty());

    // Fitting keeps it valid.
    let json = fitted(complete("", &candidates), ProtocolVersion::V2025_11_25);
    assert_eq!(json["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(json["completion"]["hasMore"], true);
}

#[test]
fn completion_of_prompt_arguments_checks_the_prompt() {
    let mut catalog = Catalog::default();
    catalog
        .add_prompt(Prompt::new("code").with_arguments(vec![PromptArgument::new("language")]))
        .unwrap();
    let result = catalog
        .complete_prompt_argument("code", "language", "py", ["python", "pytorch", "rust"])
        .unwrap();
    assert_eq!(result.completion.values, ["python", "pytorch"]);
    assert_eq!(
        catalog
            .complete_prompt_argument("code", "nope", "", ["x"])
            .unwrap_err()
            .code,
        code::INVALID_PARAMS
    );
    assert_eq!(
        catalog
            .complete_prompt_argument("nope", "language", "", ["x"])
            .unwrap_err()
            .message,
        "Unknown prompt: nope"
    );
}
