//! What every macro shares: the binding, the attribute's settings, doc comments, types

use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, Lit, Meta, Pat, PathArguments, Signature,
    Token, Type,
};

/// Which binding the code is for: its crate path, and whether its handlers are async
pub(crate) enum Binding {
    Async(Tokens),
    Blocking(Tokens),
}

impl Binding {
    pub(crate) fn krate(&self) -> &Tokens {
        match self {
            Self::Async(k) | Self::Blocking(k) => k,
        }
    }

    pub(crate) fn support(&self) -> Tokens {
        let krate = self.krate();
        quote!(#krate::__macros)
    }

    pub(crate) fn is_async(&self) -> bool {
        matches!(self, Self::Async(_))
    }

    /// A function of this binding's handlers: blocking ones are plain
    pub(crate) fn check(&self, sig: &Signature) -> syn::Result<()> {
        if !self.is_async() && sig.asyncness.is_some() {
            return Err(syn::Error::new(
                sig.asyncness.span(),
                "mcp-sansio-blocking runs handlers as plain functions on its worker threads: \
                 remove `async`",
            ));
        }
        if !sig.generics.params.is_empty() {
            return Err(syn::Error::new(
                sig.generics.span(),
                "a #[tool], #[prompt] or #[resource] function has no generic parameters",
            ));
        }
        Ok(())
    }
}

/// One setting of an attribute: `key = "value"`, `key = true`, `key`, a bare string, or
/// `key = ["a", "b"]`
pub(crate) enum Setting {
    Text(String, String, proc_macro2::Span),
    Flag(String, bool, proc_macro2::Span),
    Bare(String, proc_macro2::Span),
    /// A list of string literals, each with its span
    List(String, Vec<(String, proc_macro2::Span)>, proc_macro2::Span),
}

impl Setting {
    /// Where it is written
    pub(crate) fn span(&self) -> proc_macro2::Span {
        match self {
            Self::Text(_, _, span)
            | Self::Flag(_, _, span)
            | Self::Bare(_, span)
            | Self::List(_, _, span) => *span,
        }
    }
}

/// The settings of an attribute's arguments
pub(crate) fn settings(attr: Tokens) -> syn::Result<Vec<Setting>> {
    let exprs = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(attr)?;
    exprs
        .into_iter()
        .map(|expr| {
            let span = expr.span();
            match expr {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Ok(Setting::Bare(s.value(), span)),
                Expr::Path(p) if p.path.get_ident().is_some() => {
                    Ok(Setting::Flag(ident(&p.path), true, span))
                }
                Expr::Assign(assign) => {
                    let Expr::Path(key) = &*assign.left else {
                        return Err(syn::Error::new(span, "expected `name = value`"));
                    };
                    let key = ident(&key.path);
                    match &*assign.right {
                        Expr::Lit(ExprLit {
                            lit: Lit::Str(s), ..
                        }) => Ok(Setting::Text(key, s.value(), span)),
                        Expr::Lit(ExprLit {
                            lit: Lit::Bool(b), ..
                        }) => Ok(Setting::Flag(key, b.value, span)),
                        Expr::Array(array) => {
                            let items = array
                                .elems
                                .iter()
                                .map(|item| match item {
                                    Expr::Lit(ExprLit {
                                        lit: Lit::Str(s), ..
                                    }) => Ok((s.value(), s.span())),
                                    other => Err(syn::Error::new(
                                        other.span(),
                                        "expected a string literal: a list holds string \
                                         literals only ([\"a\", \"b\"])",
                                    )),
                                })
                                .collect::<syn::Result<_>>()?;
                            Ok(Setting::List(key, items, span))
                        }
                        other => Err(syn::Error::new(
                            other.span(),
                            "expected a string literal, `true`/`false` or a list of string \
                             literals",
                        )),
                    }
                }
                other => Err(syn::Error::new(
                    other.span(),
                    "expected `name = value` or a flag",
                )),
            }
        })
        .collect()
}

/// The scopes of a `scopes = ["a", "b"]` setting (`None` when `setting` is another one):
/// a non-empty list of OAuth scope tokens (RFC 6749 section 3.3: printable ASCII but the
/// space, `"` and `\`)
pub(crate) fn scopes(setting: &Setting) -> Option<syn::Result<Vec<String>>> {
    let checked = match setting {
        Setting::List(key, items, span) if key == "scopes" => {
            if items.is_empty() {
                Err(syn::Error::new(
                    *span,
                    "`scopes = []` requires nothing: leave the setting out, or name the \
                     scopes a caller needs (scopes = [\"mcp:admin\"])",
                ))
            } else {
                items
                    .iter()
                    .map(|(scope, span)| {
                        if is_scope_token(scope) {
                            Ok(scope.clone())
                        } else {
                            Err(syn::Error::new(
                                *span,
                                format!(
                                    "{scope:?} is no OAuth scope: one scope per string, \
                                     printable ASCII without spaces, `\"` or `\\`"
                                ),
                            ))
                        }
                    })
                    .collect()
            }
        }
        Setting::Text(key, value, span) if key == "scopes" => Err(syn::Error::new(
            *span,
            format!("expected a list of string literals: scopes = [{value:?}]"),
        )),
        Setting::Flag(key, _, span) if key == "scopes" => Err(syn::Error::new(
            *span,
            "expected a list of string literals: scopes = [\"mcp:admin\"]",
        )),
        _ => return None,
    };
    Some(checked)
}

/// Whether `scope` is one OAuth scope token: `1*( %x21 / %x23-5B / %x5D-7E )`
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// What registering an entry adds when it requires `scopes`: the builder's
/// `.require_scopes(EntryKind::kind, key, [..])?` (nothing without scopes)
pub(crate) fn require_scopes(
    binding: &Binding,
    kind: &str,
    key: &str,
    scopes: &[String],
) -> Tokens {
    if scopes.is_empty() {
        return quote!();
    }
    let support = binding.support();
    let kind = syn::Ident::new(kind, proc_macro2::Span::call_site());
    quote!(.require_scopes(#support::EntryKind::#kind, #key, [#(#scopes),*])?)
}

fn ident(path: &syn::Path) -> String {
    path.get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The doc comment's lines, trimmed and joined
pub(crate) fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.trim().to_owned())
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// A type without the invisible group a `macro_rules!` `ty` fragment puts around it, or
/// parentheses
pub(crate) fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => peel(&g.elem),
        Type::Paren(p) => peel(&p.elem),
        other => other,
    }
}

/// The last segment's name of a path type (`Context` of `mcp_sansio_tokio::Context`)
pub(crate) fn last_segment(ty: &Type) -> Option<String> {
    match peel(ty) {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// The type argument of `Option<T>`
pub(crate) fn option_of(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = peel(ty) else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// A return type split as `Result<T, E>`: `T`, and whether `E` is `ErrorObject` (`None`: no
/// `Result`)
pub(crate) fn split_result(ty: &Type) -> (Type, Option<bool>) {
    let ty = peel(ty);
    if let Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
        && let PathArguments::AngleBracketed(args) = &last.arguments
    {
        let mut types = args.args.iter().filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t.clone()),
            _ => None,
        });
        if let (Some(ok), Some(err)) = (types.next(), types.next()) {
            let protocol = last_segment(&err).as_deref() == Some("ErrorObject");
            return (ok, Some(protocol));
        }
    }
    (ty.clone(), None)
}

/// A function's parameter, sorted
pub(crate) enum Param {
    /// The handler's `Context`
    Context,
    /// Any other, by name
    Named(syn::Ident, Box<Type>),
}

/// The parameters after an optional `&self`: whether there is one, and the rest
pub(crate) fn params(sig: &Signature, method: bool) -> syn::Result<Vec<Param>> {
    let mut out = Vec::new();
    let mut context = false;
    for (i, input) in sig.inputs.iter().enumerate() {
        let param = match input {
            FnArg::Receiver(r) if method && i == 0 => {
                if r.reference.is_none() || r.mutability.is_some() {
                    return Err(syn::Error::new(
                        r.span(),
                        "a #[tool] method takes `&self` (its calls share the value)",
                    ));
                }
                continue;
            }
            FnArg::Receiver(r) => {
                return Err(syn::Error::new(
                    r.span(),
                    "a method's `self`: put the #[tool] methods in a `#[tool_router] impl` block",
                ));
            }
            FnArg::Typed(param) => param,
        };
        let Pat::Ident(pat) = &*param.pat else {
            return Err(syn::Error::new(
                param.pat.span(),
                "a parameter is a plain name (`city: String`), the argument of that name",
            ));
        };
        if last_segment(&param.ty).as_deref() == Some("Context") {
            if context {
                return Err(syn::Error::new(
                    param.span(),
                    "a handler takes at most one `Context`",
                ));
            }
            context = true;
            out.push(Param::Context);
        } else {
            out.push(Param::Named(pat.ident.clone(), param.ty.clone()));
        }
    }
    if method && !matches!(sig.inputs.first(), Some(FnArg::Receiver(_))) {
        return Err(syn::Error::new(
            sig.ident.span(),
            "a #[tool] method of a #[tool_router] block takes `&self` first",
        ));
    }
    Ok(out)
}

/// `Some(..)`/`None` of a string
pub(crate) fn option(value: Option<&str>) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `Some(..)`/`None` of a flag
pub(crate) fn option_bool(value: Option<bool>) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// The handler closure of a binding around `body` (which may use `cx` and `arguments`):
/// an async block for the async bindings; `prelude` runs in the closure before it
pub(crate) fn closure(binding: &Binding, params: Tokens, prelude: Tokens, body: Tokens) -> Tokens {
    if binding.is_async() {
        quote!(move |#params| { #prelude async move { #body } })
    } else {
        quote!(move |#params| { #prelude #body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scopes of the attribute `attr`, or its error's text
    fn scopes_of(attr: Tokens) -> Result<Vec<String>, String> {
        let settings = settings(attr).map_err(|e| e.to_string())?;
        let mut found = Vec::new();
        for setting in &settings {
            if let Some(scopes) = scopes(setting) {
                found = scopes.map_err(|e| e.to_string())?;
            }
        }
        Ok(found)
    }

    #[test]
    fn a_list_of_string_literals_is_the_scopes() {
        assert_eq!(
            scopes_of(quote!(
                read_only,
                scopes = ["mcp:admin", "files:read"],
                name = "x"
            )),
            Ok(vec!["mcp:admin".to_owned(), "files:read".to_owned()])
        );
        assert_eq!(scopes_of(quote!(name = "x")), Ok(vec![]));
    }

    #[test]
    fn mistyped_scopes_say_what_is_expected() {
        assert_eq!(
            scopes_of(quote!(scopes = "mcp:admin")),
            Err("expected a list of string literals: scopes = [\"mcp:admin\"]".to_owned())
        );
        assert_eq!(
            scopes_of(quote!(scopes)),
            Err("expected a list of string literals: scopes = [\"mcp:admin\"]".to_owned())
        );
        let mixed = scopes_of(quote!(scopes = ["a", 1])).unwrap_err();
        assert!(mixed.starts_with("expected a string literal"), "{mixed}");
        let bare = scopes_of(quote!(scopes = [admin])).unwrap_err();
        assert!(bare.starts_with("expected a string literal"), "{bare}");
        let empty = scopes_of(quote!(scopes = [])).unwrap_err();
        assert!(empty.contains("requires nothing"), "{empty}");
        for bad in ["", "mcp:read mcp:write", "a\"b", "caf\u{e9}"] {
            let error = scopes_of(quote!(scopes = [#bad])).unwrap_err();
            assert!(error.contains("is no OAuth scope"), "{bad:?}: {error}");
        }
    }

    #[test]
    fn a_list_elsewhere_is_no_scopes() {
        let settings = settings(quote!(name = ["a"])).unwrap();
        assert!(matches!(&settings[0], Setting::List(key, ..) if key == "name"));
        assert!(
            scopes(&settings[0]).is_none(),
            "the macro reports it as unknown"
        );
    }
}
