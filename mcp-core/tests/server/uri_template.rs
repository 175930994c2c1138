//! RFC 6570 URI templates: the RFC's examples, parse errors, matching for typical MCP
//! resource templates, and property tests (expand then match round trips; nothing panics)

use mcp_sansio::uri_template::{TemplateErrorKind, TemplateValue, UriTemplate, Variables};
use proptest::prelude::*;

/// The variables of RFC 6570 section 3.2, plus those of sections 2.4.1 (`semi`) and 2.4.2
/// (`year`)
fn rfc_vars() -> Variables {
    let mut v = Variables::new();
    v.insert("count", vec!["one", "two", "three"]);
    v.insert("dom", vec!["example", "com"]);
    v.insert("dub", "me/too");
    v.insert("hello", "Hello World!");
    v.insert("half", "50%");
    v.insert("var", "value");
    v.insert("who", "fred");
    v.insert("base", "http://example.com/home/");
    v.insert("path", "/foo/bar");
    v.insert("list", vec!["red", "green", "blue"]);
    v.insert("keys", vec![("semi", ";"), ("dot", "."), ("comma", ",")]);
    v.insert("v", "6");
    v.insert("x", "1024");
    v.insert("y", "768");
    v.insert("empty", "");
    v.insert("empty_keys", Vec::<(&str, &str)>::new());
    // `undef` is deliberately not set
    v.insert("semi", ";");
    v.insert("year", vec!["1965", "2000", "2012"]);
    v
}

/// Every example of RFC 6570 section 3.2, then the extra ones of sections 1.2 and 2.4
const RFC_EXAMPLES: &[(&str, &str)] = &[
    // 3.2.1 Variable Expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    // 3.2.2 Simple String Expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    // 3.2.3 Reserved Expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    // 3.2.4 Fragment Expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    // 3.2.5 Label Expansion with Dot-Prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    // 3.2.6 Path Segment Expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    // 3.2.7 Path-Style Parameter Expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    // 3.2.8 Form-Style Query Expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    // 3.2.9 Form-Style Query Continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
    // 1.2 (levels 1 to 4) examples not repeated in 3.2
    ("map?{x,y}", "map?1024,768"),
    ("X{.x,y}", "X.1024.768"),
    ("{var:20}", "value"),
    // 2.4.1 Prefix Values
    ("{semi}", "%3B"),
    ("{semi:2}", "%3B"),
    // 2.4.2 Composite Values
    ("find{?year*}", "find?year=1965&year=2000&year=2012"),
];

#[test]
fn rfc_6570_examples_expand_exactly() {
    let vars = rfc_vars();
    let mut failures = Vec::new();
    for &(template, expected) in RFC_EXAMPLES {
        let parsed = UriTemplate::parse(template).unwrap_or_else(|e| panic!("{template}: {e}"));
        assert_eq!(parsed.as_str(), template);
        let got = parsed.expand(&vars);
        if got != expected {
            failures.push(format!("{template}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Matching is the inverse of expansion wherever the RFC example can be recovered: the
/// matched values expand back to the same URI. The rest are the documented limits: a
/// non-exploded list or map comes back as one string (re-expanded with its commas
/// encoded), and operators none and `+` never match an empty expansion.
#[test]
fn rfc_6570_examples_match_back() {
    let not_recoverable: &[&str] = &[
        // Non-exploded lists and maps of operators none, `.` and `/`: a raw `,` never matches
        "{count}",
        "{/count}",
        "{list}",
        "{keys}",
        "X{.list}",
        "X{.keys}",
        "{/list}",
        "{/keys}",
        // Non-exploded lists and maps of named operators: one string with raw commas
        "{;count}",
        "{?count}",
        "{;list}",
        "{;keys}",
        "{?list}",
        "{?keys}",
        "{&list}",
        "{&keys}",
        // `.` is both the separator and inside the value "." of `{.keys*}`
        "X{.keys*}",
        // A repeated variable takes its first match
        "{/var:1,var}",
        // Operators none and `+` never match an empty expansion
        "O{empty}X",
        "O{undef}X",
        "O{+empty}X",
        "O{+undef}X",
    ];
    let mut unexpected = Vec::new();
    for &(template, uri) in RFC_EXAMPLES {
        let parsed = UriTemplate::parse(template).unwrap();
        let recovered = parsed.matches(uri).map(|m| parsed.expand(&m));
        let ok = recovered.as_deref() == Some(uri);
        if ok == not_recoverable.contains(&template) {
            unexpected.push(format!("{template} on {uri:?}: got {recovered:?}"));
        }
    }
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}

/// `(template, uri, expected variables)`
type ValueCase<'a> = (&'a str, &'a str, &'a [(&'a str, TemplateValue)]);

#[test]
fn rfc_values_are_recovered() {
    let cases: &[ValueCase<'_>] = &[
        (
            "{hello}",
            "Hello%20World%21",
            &[("hello", TemplateValue::String("Hello World!".into()))],
        ),
        (
            "{half}",
            "50%25",
            &[("half", TemplateValue::String("50%".into()))],
        ),
        (
            "{+path:6}/here",
            "/foo/b/here",
            &[("path", TemplateValue::String("/foo/b".into()))],
        ),
        (
            "{+path,x}/here",
            "/foo/bar,1024/here",
            &[
                ("path", TemplateValue::String("/foo/bar".into())),
                ("x", TemplateValue::String("1024".into())),
            ],
        ),
        (
            "{/list*}",
            "/red/green/blue",
            &[(
                "list",
                TemplateValue::List(vec!["red".into(), "green".into(), "blue".into()]),
            )],
        ),
        (
            "{/keys*}",
            "/semi=%3B/dot=./comma=%2C",
            &[(
                "keys",
                TemplateValue::Map(vec![
                    ("semi".into(), ";".into()),
                    ("dot".into(), ".".into()),
                    ("comma".into(), ",".into()),
                ]),
            )],
        ),
        (
            "{;keys*}",
            ";semi=%3B;dot=.;comma=%2C",
            &[(
                "keys",
                TemplateValue::Map(vec![
                    ("semi".into(), ";".into()),
                    ("dot".into(), ".".into()),
                    ("comma".into(), ",".into()),
                ]),
            )],
        ),
        (
            "{?list*}",
            "?list=red&list=green&list=blue",
            &[(
                "list",
                TemplateValue::List(vec!["red".into(), "green".into(), "blue".into()]),
            )],
        ),
        (
            "{;v,empty,who}",
            ";v=6;empty;who=fred",
            &[
                ("v", TemplateValue::String("6".into())),
                ("empty", TemplateValue::String(String::new())),
                ("who", TemplateValue::String("fred".into())),
            ],
        ),
        (
            "?{x,empty}",
            "?1024,",
            &[
                ("x", TemplateValue::String("1024".into())),
                ("empty", TemplateValue::String(String::new())),
            ],
        ),
        (
            "{.who,who}",
            ".fred.fred",
            &[("who", TemplateValue::String("fred".into()))],
        ),
        (
            "foo{#empty}",
            "foo#",
            &[("empty", TemplateValue::String(String::new()))],
        ),
        ("foo{#empty}", "foo", &[]),
        (
            "www{.dom*}",
            "www.example.com",
            &[(
                "dom",
                TemplateValue::List(vec!["example".into(), "com".into()]),
            )],
        ),
    ];
    for (template, uri, expected) in cases {
        let t = UriTemplate::parse(template).unwrap();
        let got = t
            .matches(uri)
            .unwrap_or_else(|| panic!("{template} should match {uri}"));
        let got: Vec<(&str, TemplateValue)> = got.iter().map(|(k, v)| (k, v.clone())).collect();
        assert_eq!(&got, expected, "{template} on {uri}");
    }
}

#[test]
fn parse_errors_name_position_and_problem() {
    use TemplateErrorKind as K;
    let cases: &[(&str, usize, TemplateErrorKind)] = &[
        ("{var", 0, K::UnclosedExpression),
        ("file:///{path", 8, K::UnclosedExpression),
        ("a}b", 1, K::UnmatchedClose),
        ("{a{b}", 2, K::NestedBrace),
        ("x{}", 1, K::EmptyExpression),
        ("{=var}", 1, K::ReservedOperator('=')),
        ("{,var}", 1, K::ReservedOperator(',')),
        ("{!var}", 1, K::ReservedOperator('!')),
        ("{@var}", 1, K::ReservedOperator('@')),
        ("{|var}", 1, K::ReservedOperator('|')),
        ("{$var}", 1, K::UnknownOperator('$')),
        ("{-var}", 1, K::UnknownOperator('-')),
        ("{a,}", 3, K::EmptyVariableName),
        ("{+}", 2, K::EmptyVariableName),
        ("{:3}", 1, K::EmptyVariableName),
        ("{a b}", 2, K::InvalidVariableName),
        ("{a-b}", 2, K::InvalidVariableName),
        ("{a..b}", 3, K::InvalidVariableName),
        ("{.a.}", 3, K::InvalidVariableName),
        ("{a*b}", 3, K::InvalidVariableName),
        ("{a%2}", 2, K::InvalidPercentEncoding),
        ("{var:10000}", 4, K::InvalidPrefix),
        ("{var:0}", 4, K::InvalidPrefix),
        ("{var:012}", 4, K::InvalidPrefix),
        ("{var:}", 4, K::InvalidPrefix),
        ("{var:3x}", 6, K::InvalidPrefix),
        ("{var:3*}", 6, K::ExplodeWithPrefix),
        ("{var*:3}", 5, K::ExplodeWithPrefix),
        ("100%", 3, K::InvalidPercentEncoding),
        ("a%zz", 1, K::InvalidPercentEncoding),
        ("a b", 1, K::InvalidLiteral(' ')),
        ("a\"b", 1, K::InvalidLiteral('"')),
        ("<{x}>", 0, K::InvalidLiteral('<')),
        ("a\\b", 1, K::InvalidLiteral('\\')),
        ("a^b", 1, K::InvalidLiteral('^')),
        ("a|b", 1, K::InvalidLiteral('|')),
        ("a\nb", 1, K::InvalidLiteral('\n')),
    ];
    for (template, position, kind) in cases {
        let err = UriTemplate::parse(template).expect_err(template);
        assert_eq!(
            (err.position(), err.kind()),
            (*position, kind),
            "{template}: {err}"
        );
        assert!(
            err.to_string().contains(&format!("at byte {position}")),
            "{err}"
        );
    }
    // The edges of what is valid
    for ok in [
        "{var:9999}",
        "{var:1}",
        "{a.b}",
        "{a_1,B2}",
        "{%41b}",
        "caf\u{e9}/{x}",
        "{x}%20y",
        "[{x}]",
        "",
    ] {
        UriTemplate::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let message = UriTemplate::parse("{var").unwrap_err().to_string();
    assert_eq!(message, "invalid URI template at byte 0: unclosed '{'");
}

#[test]
fn accessors_and_conversions() {
    let t: UriTemplate = "db://{table}/{id}{.format}{?id,q}".parse().unwrap();
    assert_eq!(
        t.variables().collect::<Vec<_>>(),
        ["table", "id", "format", "q"]
    );
    assert!(t.variables().any(|v| v == "q"));
    assert!(!t.variables().any(|v| v == "nope"));
    assert_eq!(t.to_string(), "db://{table}/{id}{.format}{?id,q}");
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(json, "\"db://{table}/{id}{.format}{?id,q}\"");
    let back: UriTemplate = serde_json::from_str(&json).unwrap();
    assert_eq!(back, t);
    assert!(serde_json::from_str::<UriTemplate>("\"{oops\"").is_err());

    // Non-ASCII literals are percent-encoded on expansion, and must come percent-encoded
    let t = UriTemplate::parse("caf\u{e9}/{x}").unwrap();
    let vars: Variables = [("x", "\u{20ac}")].into_iter().collect();
    assert_eq!(t.expand(&vars), "caf%C3%A9/%E2%82%AC");
    assert_eq!(
        t.matches("caf%C3%A9/%E2%82%AC").unwrap().get_str("x"),
        Some("\u{20ac}")
    );
    assert_eq!(t.matches("caf\u{e9}/x"), None);

    let mut vars = Variables::new();
    assert!(vars.is_empty());
    assert_eq!(vars.insert("a", "1"), None);
    vars.insert("b", vec!["x", "y"]);
    assert_eq!(
        vars.insert("a", "2"),
        Some(TemplateValue::String("1".into()))
    );
    assert_eq!(vars.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(
        match vars.get("b") {
            Some(TemplateValue::List(items)) => Some(items.len()),
            _ => None,
        },
        Some(2)
    );
    assert_eq!(vars.remove("a"), Some(TemplateValue::String("2".into())));
    assert!(!vars.contains("a"));
    assert_eq!(vars.len(), 1);
}

/// `(uri, Some(expected variables))` or `(uri, None)` for a non-match
type MatchCase<'a> = (&'a str, Option<&'a [(&'a str, &'a str)]>);

fn check_matches(template: &str, cases: &[MatchCase<'_>]) {
    let t = UriTemplate::parse(template).unwrap();
    for (uri, expected) in cases {
        let got = t.matches(uri);
        match expected {
            None => assert!(got.is_none(), "{template} should not match {uri}: {got:?}"),
            Some(expected) => {
                let got = got.unwrap_or_else(|| panic!("{template} should match {uri}"));
                let got: Vec<(&str, &str)> = got
                    .iter()
                    .map(|(k, v)| {
                        (
                            k,
                            v.as_str()
                                .unwrap_or_else(|| panic!("{k} is not a string: {v:?}")),
                        )
                    })
                    .collect();
                assert_eq!(&got, expected, "{template} on {uri}");
            }
        }
    }
}

#[test]
fn match_file_path_level_1() {
    check_matches(
        "file:///{path}",
        &[
            ("file:///readme.txt", Some(&[("path", "readme.txt")])),
            ("file:///my%20file.txt", Some(&[("path", "my file.txt")])),
            ("file:///caf%C3%A9", Some(&[("path", "caf\u{e9}")])),
            ("file:///100%25", Some(&[("path", "100%")])),
            ("file:///a/b", None),
            ("file:///a?b", None),
            ("file:///a#b", None),
            ("file:///", None),
            ("file://", None),
            ("http:///readme.txt", None),
            ("FILE:///readme.txt", None),
        ],
    );
}

#[test]
fn match_file_path_reserved() {
    check_matches(
        "file:///{+path}",
        &[
            ("file:///a/b/c", Some(&[("path", "a/b/c")])),
            ("file:///dir%20x/f.rs", Some(&[("path", "dir x/f.rs")])),
            ("file:///a?b#c", Some(&[("path", "a?b#c")])),
            ("file:///", None),
            ("file://a", None),
        ],
    );
}

#[test]
fn match_user_profile() {
    check_matches(
        "users://{id}/profile",
        &[
            ("users://42/profile", Some(&[("id", "42")])),
            (
                "users://j%40example.com/profile",
                Some(&[("id", "j@example.com")]),
            ),
            ("users://a%2Fb/profile", Some(&[("id", "a/b")])),
            ("users://42/settings", None),
            ("users:///profile", None),
            ("users://a/b/profile", None),
            ("users://42/profile/", None),
            ("users://42/profil", None),
        ],
    );
}

#[test]
fn match_github_issues_with_query() {
    let template = "https://api.example.com/repos/{owner}/{repo}/issues{?state,labels}";
    check_matches(
        template,
        &[
            (
                "https://api.example.com/repos/rust-lang/rust/issues",
                Some(&[("owner", "rust-lang"), ("repo", "rust")]),
            ),
            (
                "https://api.example.com/repos/o/r/issues?state=open",
                Some(&[("owner", "o"), ("repo", "r"), ("state", "open")]),
            ),
            (
                "https://api.example.com/repos/o/r/issues?labels=bug&state=closed",
                Some(&[
                    ("owner", "o"),
                    ("repo", "r"),
                    ("state", "closed"),
                    ("labels", "bug"),
                ]),
            ),
            (
                "https://api.example.com/repos/o/r/issues?labels=a%2Cb",
                Some(&[("owner", "o"), ("repo", "r"), ("labels", "a,b")]),
            ),
            (
                "https://api.example.com/repos/o/r/issues?labels=bug,ui",
                Some(&[("owner", "o"), ("repo", "r"), ("labels", "bug,ui")]),
            ),
            (
                "https://api.example.com/repos/o/r/issues?state=",
                Some(&[("owner", "o"), ("repo", "r"), ("state", "")]),
            ),
            (
                "https://api.example.com/repos/o/r/issues?state=a%20b%26c",
                Some(&[("owner", "o"), ("repo", "r"), ("state", "a b&c")]),
            ),
            ("https://api.example.com/repos/o/r/issues?page=2", None),
            (
                "https://api.example.com/repos/o/r/issues?state=open&page=2",
                None,
            ),
            ("https://api.example.com/repos/o/r/issues?", None),
            (
                "https://api.example.com/repos/o/r/issues?state=open#top",
                None,
            ),
            ("https://api.example.com/repos/o/r/issues/1", None),
            ("https://api.example.com/repos/o/issues", None),
        ],
    );
}

#[test]
fn match_db_with_optional_format() {
    check_matches(
        "db://{table}/{id}{.format}",
        &[
            (
                "db://users/42.json",
                Some(&[("table", "users"), ("id", "42"), ("format", "json")]),
            ),
            ("db://users/42", Some(&[("table", "users"), ("id", "42")])),
            (
                "db://users/42.tar.gz",
                Some(&[("table", "users"), ("id", "42"), ("format", "tar.gz")]),
            ),
            (
                "db://users/42.",
                Some(&[("table", "users"), ("id", "42"), ("format", "")]),
            ),
            ("db://users/", None),
            ("db://users", None),
            ("db://users/42/x", None),
        ],
    );
}

#[test]
fn match_test_template_and_git_ref() {
    check_matches(
        "test://template/{id}/data",
        &[
            ("test://template/123/data", Some(&[("id", "123")])),
            ("test://template/a%20b/data", Some(&[("id", "a b")])),
            ("test://template/123/other", None),
            ("test://template/1/2/data", None),
            ("test://template//data", None),
        ],
    );
    check_matches(
        "git://{repo}/{+ref}",
        &[
            (
                "git://mcp/refs/heads/main",
                Some(&[("repo", "mcp"), ("ref", "refs/heads/main")]),
            ),
            ("git://mcp/v1.0", Some(&[("repo", "mcp"), ("ref", "v1.0")])),
            // `+` writes `/` raw, so an encoded one was in the value
            (
                "git://mcp/feature%2Fx",
                Some(&[("repo", "mcp"), ("ref", "feature%2Fx")]),
            ),
            (
                "git://mcp/a%20b%C3%A9",
                Some(&[("repo", "mcp"), ("ref", "a b\u{e9}")]),
            ),
            ("git://mcp", None),
            ("git://mcp/", None),
            ("git:///main", None),
        ],
    );
}

#[test]
fn match_split_preferences() {
    // Longest for the earlier variable, but first stopping before what follows
    check_matches("{path}.txt", &[("a.b.txt", Some(&[("path", "a.b")]))]);
    check_matches("{a}{b}", &[("xyz", Some(&[("a", "xy"), ("b", "z")]))]);
    check_matches("{+a}/{b}", &[("x/y/z", Some(&[("a", "x/y"), ("b", "z")]))]);
    check_matches(
        "{x,y}",
        &[
            ("1", Some(&[("x", "1")])),
            ("1,2", Some(&[("x", "1"), ("y", "2")])),
        ],
    );
    check_matches(
        "{var:3}{rest}",
        &[("abcdef", Some(&[("var", "abc"), ("rest", "def")]))],
    );
    check_matches("{x:2}", &[("ab", Some(&[("x", "ab")])), ("abc", None)]);
    check_matches(
        "{?x:2}",
        &[("?x=ab", Some(&[("x", "ab")])), ("?x=abc", None)],
    );
    // A repeated query name keeps its first value; a repeated variable its first match
    check_matches("{?x}", &[("?x=1&x=2", Some(&[("x", "1")]))]);
    check_matches("{x}/{x}", &[("a/b", Some(&[("x", "a")]))]);
    // Query continuation after a fixed query, and `?` then `&` expressions
    check_matches(
        "?fixed=yes{&x}",
        &[
            ("?fixed=yes&x=1", Some(&[("x", "1")])),
            ("?fixed=yes", Some(&[])),
        ],
    );
    check_matches(
        "/s{?q}{&page}",
        &[
            ("/s?q=a&page=2", Some(&[("q", "a"), ("page", "2")])),
            ("/s&page=2", Some(&[("page", "2")])),
        ],
    );
    // Path parameters in any order
    check_matches(
        "/m{;x,y}",
        &[
            ("/m;y=2;x=1", Some(&[("x", "1"), ("y", "2")])),
            ("/m;z=1", None),
        ],
    );
    // Fragments
    check_matches(
        "/doc{#section}",
        &[
            ("/doc#a/b?c", Some(&[("section", "a/b?c")])),
            ("/doc", Some(&[])),
        ],
    );
    // Percent-encoded bytes that are not UTF-8 are kept as written
    check_matches("/{x}", &[("/%FF%41", Some(&[("x", "%FFA")]))]);
}

/// Cases the round-trip property once found
#[test]
fn round_trip_regressions() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        // `+` writes `:` raw, so `%3A` belongs to a value that contained `%3A`
        ("{+a}{b}", &[("a", "g"), ("b", ":g")]),
        // The triplets of one UTF-8 character are never split between variables
        ("{a}{b}{c}", &[("a", "g"), ("b", "g"), ("c", "\u{e9}")]),
    ];
    for (template, values) in cases {
        let t = UriTemplate::parse(template).unwrap();
        let uri = t.expand(&values.iter().copied().collect());
        let m = t
            .matches(&uri)
            .unwrap_or_else(|| panic!("{template} on {uri}"));
        assert_eq!(t.expand(&m), uri, "{template}: {m:?}");
    }
}

#[test]
fn match_exploded_values() {
    let t = UriTemplate::parse("/files{/segments*}").unwrap();
    let m = t.matches("/files/a/b%2Fc/d").unwrap();
    assert_eq!(
        m.get("segments"),
        Some(&TemplateValue::List(vec![
            "a".into(),
            "b/c".into(),
            "d".into()
        ]))
    );
    assert!(t.matches("/files").unwrap().is_empty());

    let t = UriTemplate::parse("/search{?q,opts*}").unwrap();
    let m = t.matches("/search?lang=en&q=x&opts=a&page=2").unwrap();
    assert_eq!(m.get_str("q"), Some("x"));
    assert_eq!(
        m.get("opts"),
        Some(&TemplateValue::Map(vec![
            ("lang".into(), "en".into()),
            ("opts".into(), "a".into()),
            ("page".into(), "2".into())
        ]))
    );
    let m = t.matches("/search?opts=a&opts=b").unwrap();
    assert_eq!(
        m.get("opts"),
        Some(&TemplateValue::List(vec!["a".into(), "b".into()]))
    );
}

/// Many adjacent variables against a long URI: the matcher is polynomial (a table of
/// states × positions), so this finishes promptly whether or not it matches.
#[test]
fn adversarial_inputs_finish() {
    let long = "x".repeat(20_000);
    let t = UriTemplate::parse("{a}{b}{c}{d}{e}{f}{g}{h}").unwrap();
    let m = t.matches(&long).unwrap();
    assert_eq!(m.get_str("a").map(str::len), Some(20_000 - 7));
    assert_eq!(t.expand(&m), long);
    assert!(t.matches(&format!("{long}/")).is_none());
    assert!(t.matches(&format!("/{long}")).is_none());

    let t = UriTemplate::parse("{+a}{+b}{+c}{+d}{+e}{+f}{+g}{+h}!").unwrap();
    assert!(t.matches(&format!("{}?", "/".repeat(20_000))).is_none());

    let t = UriTemplate::parse("{/a*}{/b*}{/c*}{/d*}{.e*}x").unwrap();
    assert!(t.matches(&"/.".repeat(10_000)).is_none());

    let t = UriTemplate::parse("{?a*}{&b*}{&c}{&d*};").unwrap();
    let query = format!("?{}", "a=1&b&".repeat(3_000));
    assert!(t.matches(&query).is_none());
    let query = format!("?{}", vec!["a=1"; 5_000].join("&"));
    assert_eq!(t.matches(&query), None);
    assert!(t.matches(&format!("{query};")).is_some());

    // Past the table bound, matching gives up instead of allocating
    let t = UriTemplate::parse("{+a}").unwrap();
    assert!(t.matches(&"a".repeat(3_000_000)).is_none());
    assert!(t.matches(&"a".repeat(100_000)).is_some());
}

// ---------------------------------------------------------------------------------------------
// Properties

/// How a property test fills one variable
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A non-empty string (operators none and `+` cannot recover an empty expansion)
    Required,
    /// Absent, empty or not
    Optional,
    /// A list, possibly empty, of possibly empty items
    List,
}

/// Templates for the round trip, and how to fill their variables
const ROUND_TRIP_TEMPLATES: &[(&str, &[(&str, Kind)])] = &[
    ("file:///{path}", &[("path", Kind::Required)]),
    ("file:///{+path}", &[("path", Kind::Required)]),
    ("users://{id}/profile", &[("id", Kind::Required)]),
    (
        "https://api.example.com/repos/{owner}/{repo}/issues{?state,labels}",
        &[
            ("owner", Kind::Required),
            ("repo", Kind::Required),
            ("state", Kind::Optional),
            ("labels", Kind::Optional),
        ],
    ),
    (
        "db://{table}/{id}{.format}",
        &[
            ("table", Kind::Required),
            ("id", Kind::Required),
            ("format", Kind::Optional),
        ],
    ),
    ("test://template/{id}/data", &[("id", Kind::Required)]),
    (
        "git://{repo}/{+ref}",
        &[("repo", Kind::Required), ("ref", Kind::Required)],
    ),
    (
        "{a}{b}{c}",
        &[
            ("a", Kind::Required),
            ("b", Kind::Required),
            ("c", Kind::Required),
        ],
    ),
    ("{x,y}", &[("x", Kind::Required), ("y", Kind::Optional)]),
    (
        "{+x,y}/here",
        &[("x", Kind::Required), ("y", Kind::Optional)],
    ),
    ("{+a}{b}", &[("a", Kind::Required), ("b", Kind::Required)]),
    (
        "{var:3}{rest}",
        &[("var", Kind::Required), ("rest", Kind::Required)],
    ),
    ("{a}.{b}", &[("a", Kind::Required), ("b", Kind::Required)]),
    (
        "x{/segs*}{.ext}",
        &[("segs", Kind::List), ("ext", Kind::Optional)],
    ),
    (
        "x{/a,b}{#frag}",
        &[
            ("a", Kind::Optional),
            ("b", Kind::Optional),
            ("frag", Kind::Optional),
        ],
    ),
    (
        "q{?a,b,list*}{&c}",
        &[
            ("a", Kind::Optional),
            ("b", Kind::Optional),
            ("list", Kind::List),
            ("c", Kind::Optional),
        ],
    ),
    (
        "p{;x,y}/{z}",
        &[
            ("x", Kind::Optional),
            ("y", Kind::Optional),
            ("z", Kind::Required),
        ],
    ),
    ("{.dom*}", &[("dom", Kind::List)]),
    (
        "mcp://{server}{/tool}{?arg}",
        &[
            ("server", Kind::Required),
            ("tool", Kind::Optional),
            ("arg", Kind::Optional),
        ],
    ),
];

/// Strings with reserved characters, `%`, space and non-ASCII; no hex digits, so a `%` in a
/// value never forms a `%XX` triplet (which `+` would pass through undecodably)
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            'g',
            'h',
            'x',
            'y',
            'z',
            'G',
            'Z',
            '-',
            '.',
            '_',
            '~',
            ':',
            '/',
            '?',
            '#',
            '[',
            ']',
            '@',
            '!',
            '$',
            '&',
            '\'',
            '(',
            ')',
            '*',
            '+',
            ',',
            ';',
            '=',
            ' ',
            '%',
            '\u{e9}',
            '\u{20ac}',
            '\u{1f600}',
        ]),
        0..8,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn fill(kind: Kind) -> BoxedStrategy<Option<TemplateValue>> {
    match kind {
        Kind::Required => text()
            .prop_filter("non-empty", |s| !s.is_empty())
            .prop_map(|s| Some(s.into()))
            .boxed(),
        Kind::Optional => prop::option::of(text().prop_map(TemplateValue::from)).boxed(),
        Kind::List => prop::collection::vec(text(), 0..4)
            .prop_map(|l| Some(l.into()))
            .boxed(),
    }
}

fn template_and_vars() -> impl Strategy<Value = (&'static str, Variables)> {
    (0..ROUND_TRIP_TEMPLATES.len()).prop_flat_map(|i| {
        let (template, spec) = ROUND_TRIP_TEMPLATES[i];
        let values: Vec<_> = spec.iter().map(|&(_, kind)| fill(kind)).collect();
        values.prop_map(move |values| {
            let mut vars = Variables::new();
            for (&(name, _), value) in spec.iter().zip(values) {
                if let Some(value) = value {
                    vars.insert(name, value);
                }
            }
            (template, vars)
        })
    })
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig::with_cases(2000)))]

    /// Expanding, matching, and expanding the match again gives the same URI
    #[test]
    fn expand_match_round_trip((template, vars) in template_and_vars()) {
        let t = UriTemplate::parse(template).unwrap();
        let uri = t.expand(&vars);
        let matched = t.matches(&uri);
        prop_assert!(matched.is_some(), "{} did not match its expansion {:?} of {:?}", template, uri, vars);
        let again = t.expand(&matched.unwrap());
        prop_assert_eq!(again, uri);
    }

    /// Where there is no ambiguity, matching recovers the exact values
    #[test]
    fn single_variables_come_back_exactly(value in text().prop_filter("non-empty", |s| !s.is_empty())) {
        for template in ["file:///{path}", "file:///{+path}", "users://{id}/profile", "x{#f}", "x{?q}"] {
            let t = UriTemplate::parse(template).unwrap();
            let name = t.variables().next().unwrap().to_owned();
            let vars: Variables = [(name.as_str(), value.as_str())].into_iter().collect();
            let m = t.matches(&t.expand(&vars));
            prop_assert_eq!(m, Some(vars), "{}", template);
        }
    }

    /// Arbitrary template strings never panic; valid ones expand and match without panicking
    #[test]
    fn arbitrary_templates_never_panic(
        template in prop_oneof![".{0,40}", "[{}a-c,:*+#./;?&=%0-9!|@$ -]{0,30}"],
        uri in prop_oneof![".{0,40}", "[a-c/.;?&=,#%0-9A-F]{0,40}"],
        value in text(),
    ) {
        if let Ok(t) = UriTemplate::parse(&template) {
            prop_assert_eq!(t.as_str(), template.as_str());
            let mut vars = Variables::new();
            for (i, name) in t.variables().enumerate() {
                match i % 3 {
                    0 => vars.insert(name, value.as_str()),
                    1 => vars.insert(name, vec![value.clone(), "z".to_owned()]),
                    _ => vars.insert(name, vec![(value.clone(), value.clone())]),
                };
            }
            let expanded = t.expand(&vars);
            if let Some(m) = t.matches(&expanded) {
                let _ = t.expand(&m);
            }
            if let Some(m) = t.matches(&uri) {
                let _ = t.expand(&m);
            }
        }
    }

    /// Matching any URI against the typical templates never panics, and any match expands to
    /// a URI that matches again
    #[test]
    fn arbitrary_uris_never_panic(uri in prop_oneof![".{0,60}", "[a-z:/.?#&=;,%0-9A-F]{0,60}"], i in 0..ROUND_TRIP_TEMPLATES.len()) {
        let t = UriTemplate::parse(ROUND_TRIP_TEMPLATES[i].0).unwrap();
        if let Some(m) = t.matches(&uri) {
            let expanded = t.expand(&m);
            prop_assert!(t.matches(&expanded).is_some(), "{} -> {:?} -> {:?}", uri, m, expanded);
        }
    }
}
