//! `Catalog::resolve`: exact resources first, then templates in listing order; the
//! not-found error; template registration and completion

use mcp_sansio::jsonrpc::code;
use mcp_sansio::schema::{PaginatedParams, Resource, ResourceTemplate};
use mcp_sansio::server::{Catalog, CatalogError, EntryKind, ResourceMatch, resource_not_found};
use serde_json::json;

fn catalog() -> Catalog {
    let mut catalog = Catalog::default();
    catalog
        .add_resource(Resource::new("test://static-text", "static-text"))
        .unwrap();
    catalog
        .add_resource(Resource::new("test://template/special/data", "special"))
        .unwrap();
    for (template, name) in [
        ("test://template/{id}/data", "data"),
        ("file:///{+path}", "files"),
        ("db://{table}/{id}{.format}", "rows"),
        ("search://items{?q,limit}", "search"),
    ] {
        catalog
            .add_template(ResourceTemplate::new(template, name))
            .unwrap();
    }
    catalog
}

fn template_match<'a>(catalog: &'a Catalog, uri: &str) -> (&'a str, Vec<(String, String)>) {
    match catalog.resolve(uri) {
        Some(ResourceMatch::Template {
            template,
            variables,
        }) => (
            template.uri_template.as_str(),
            variables
                .iter()
                .map(|(name, value)| (name.to_owned(), value.as_str().unwrap().to_owned()))
                .collect(),
        ),
        other => panic!("{uri}: {other:?}"),
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn an_exact_resource_wins() {
    let catalog = catalog();
    match catalog.resolve("test://static-text") {
        Some(ResourceMatch::Resource(resource)) => assert_eq!(resource.name, "static-text"),
        other => panic!("{other:?}"),
    }
    // Also when a template would match the same URI.
    match catalog.resolve("test://template/special/data") {
        Some(ResourceMatch::Resource(resource)) => assert_eq!(resource.name, "special"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn templates_match_with_their_variables() {
    let catalog = catalog();
    assert_eq!(
        template_match(&catalog, "test://template/123/data"),
        ("test://template/{id}/data", pairs(&[("id", "123")]))
    );
    assert_eq!(
        template_match(&catalog, "file:///src/lib%20x.rs"),
        ("file:///{+path}", pairs(&[("path", "src/lib x.rs")]))
    );
    assert_eq!(
        template_match(&catalog, "db://users/42.json"),
        (
            "db://{table}/{id}{.format}",
            pairs(&[("table", "users"), ("id", "42"), ("format", "json")])
        )
    );
    assert_eq!(
        template_match(&catalog, "search://items?limit=5&q=rust"),
        (
            "search://items{?q,limit}",
            pairs(&[("q", "rust"), ("limit", "5")])
        )
    );
    // One variable of operator none does not take a `/`.
    assert!(catalog.resolve("test://template/1/2/data").is_none());
}

#[test]
fn the_first_matching_template_in_listing_order_wins() {
    let mut catalog = Catalog::default();
    // Sorted by URI template: "x://{+rest}" < "x://{a}".
    catalog
        .add_template(ResourceTemplate::new("x://{a}", "one segment"))
        .unwrap();
    catalog
        .add_template(ResourceTemplate::new("x://{+rest}", "anything"))
        .unwrap();
    match catalog.resolve("x://abc") {
        Some(ResourceMatch::Template { template, .. }) => assert_eq!(template.name, "anything"),
        other => panic!("{other:?}"),
    }
    catalog.remove_template("x://{+rest}");
    match catalog.resolve("x://abc") {
        Some(ResourceMatch::Template {
            template,
            variables,
        }) => {
            assert_eq!(template.name, "one segment");
            assert_eq!(variables.get_str("a"), Some("abc"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_resources_get_the_not_found_error_with_the_uri() {
    let catalog = catalog();
    let uri = "test://nonexistent-resource-for-conformance-testing";
    assert!(catalog.resolve(uri).is_none());
    let error = catalog
        .resolve(uri)
        .ok_or_else(|| resource_not_found(uri))
        .unwrap_err();
    assert_eq!(error, resource_not_found(uri));
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert_eq!(error.message, format!("Resource not found: {uri}"));
    assert_eq!(
        error.data::<serde_json::Value>().unwrap().unwrap(),
        json!({"uri": uri})
    );
}

#[test]
fn templates_are_parsed_once_at_registration() {
    let mut catalog = Catalog::default();
    for bad in ["test://{unclosed", "test://{}", "test://a}b", "test://{=x}"] {
        match catalog.add_template(ResourceTemplate::new(bad, "bad")) {
            Err(CatalogError::InvalidTemplate { template, reason }) => {
                assert_eq!(template, bad);
                assert!(!reason.is_empty());
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert_eq!(catalog.templates().count(), 0);
    assert!(!catalog.take_changes().any());
    catalog
        .add_template(ResourceTemplate::new("test://{id}", "ok"))
        .unwrap();
    assert!(matches!(
        catalog.add_template(ResourceTemplate::new("test://{id}", "again")),
        Err(CatalogError::Duplicate {
            kind: EntryKind::Template,
            ..
        })
    ));
    assert!(catalog.take_changes().resources);
    assert_eq!(catalog.template("test://{id}").unwrap().name, "ok");
    let listed = catalog
        .list_resource_templates(&PaginatedParams::new())
        .unwrap();
    assert_eq!(listed.resource_templates[0].uri_template, "test://{id}");
}

#[test]
fn template_variables_complete_from_candidates() {
    let catalog = catalog();
    let ids: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let result = catalog
        .complete_template_variable("test://template/{id}/data", "id", "1", &ids)
        .unwrap();
    // 1, 10-19, 100-199: 111 matches, capped at 100.
    assert_eq!(result.completion.values.len(), 100);
    assert_eq!(result.completion.total, Some(111));
    assert_eq!(result.completion.has_more, Some(true));

    let error = catalog
        .complete_template_variable("test://template/{id}/data", "nope", "", &ids)
        .unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    let error = catalog
        .complete_template_variable("test://{unknown}", "unknown", "", &ids)
        .unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
}
