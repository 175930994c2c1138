//! The attribute macros of the mcp-sansio bindings: `#[tool]` turns a function into a typed
//! MCP tool
//!
//! Use them through a binding with its `macros` feature (`mcp_sansio_tokio::tool`,
//! `mcp_sansio_async_std::tool`, `mcp_sansio_blocking::tool`): each binding's entry point
//! here generates code against that binding, so the generated code names only the crate
//! the user already depends on.
//!
//! What `#[tool]` makes of
//!
//! ```text
//! /// Gets the weather of a city
//! #[tool(read_only, title = "Weather")]
//! async fn get_weather(cx: Context, city: String, days: Option<u32>) -> Result<Forecast, String>
//! ```
//!
//! - the function stays as it is (call it in a test);
//! - a type of the same name (`get_weather {}`, a braced struct: it lives beside the function)
//!   registers the tool: `builder.register(get_weather {})?`, or several at once with the
//!   binding's `tools![get_weather, other]`;
//! - the tool's name is the function's (or `name = ".."`), its description the doc comment (or
//!   `description = ".."`), `title`, and the hints `read_only`, `destructive`, `idempotent`,
//!   `open_world` (each `= false` to say so explicitly);
//! - the arguments: each parameter is one argument, or a single parameter named `args` is the
//!   whole arguments object (a type deriving `Deserialize` and `JsonSchema`); the `inputSchema`
//!   is derived with `schemars`; a parameter whose type is named `Context` gets the handler's
//!   context;
//! - the result: `String`, `&str`, `()` and `CallToolResult` are content as they are; any other
//!   type (`Serialize + JsonSchema`) is structured: its `outputSchema` is derived and its value
//!   goes in `structuredContent` (under `result` when it is no object) with its JSON text as the
//!   text block; `Result<T, E>` turns `Err(e)` into `isError: true` with `e`'s text (`E` =
//!   `ErrorObject`: a JSON-RPC error instead).

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Expr, ExprLit, FnArg, GenericArgument, ItemFn, Lit, Meta, Pat, PathArguments, ReturnType,
    Token, Type,
};

/// `#[tool]` for mcp-sansio-tokio (re-exported as `mcp_sansio_tokio::tool`)
#[proc_macro_attribute]
pub fn tool_tokio(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Binding::Async(quote!(::mcp_sansio_tokio)), attr, item)
}

/// `#[tool]` for mcp-sansio-async-std (re-exported as `mcp_sansio_async_std::tool`)
#[proc_macro_attribute]
pub fn tool_async_std(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Binding::Async(quote!(::mcp_sansio_async_std)), attr, item)
}

/// `#[tool]` for mcp-sansio-blocking (re-exported as `mcp_sansio_blocking::tool`)
#[proc_macro_attribute]
pub fn tool_blocking(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Binding::Blocking(quote!(::mcp_sansio_blocking)), attr, item)
}

/// Which binding the code is for: its crate path, and whether its handlers are async
enum Binding {
    Async(Tokens),
    Blocking(Tokens),
}

impl Binding {
    fn krate(&self) -> &Tokens {
        match self {
            Self::Async(k) | Self::Blocking(k) => k,
        }
    }
}

fn expand(binding: Binding, attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match syn::parse::<ItemFn>(item) {
        Ok(f) => f,
        Err(e) => {
            return syn::Error::new(e.span(), "#[tool] goes on a function (fn or async fn)")
                .to_compile_error()
                .into();
        }
    };
    match attributes(attr.into(), &function).and_then(|a| generate(&binding, &a, function)) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// What the attribute and the doc comment say
struct Attributes {
    name: String,
    title: Option<String>,
    description: Option<String>,
    read_only: bool,
    destructive: Option<bool>,
    idempotent: bool,
    open_world: Option<bool>,
}

fn attributes(attr: Tokens, function: &ItemFn) -> syn::Result<Attributes> {
    let mut out = Attributes {
        name: function.sig.ident.to_string(),
        title: None,
        description: doc_comment(function),
        read_only: false,
        destructive: None,
        idempotent: false,
        open_world: None,
    };
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr)?;
    for meta in metas {
        let key = meta
            .path()
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match (key.as_str(), &meta) {
            ("name" | "title" | "description", Meta::NameValue(nv)) => {
                let value = string(&nv.value)?;
                match key.as_str() {
                    "name" => out.name = value,
                    "title" => out.title = Some(value),
                    _ => out.description = Some(value),
                }
            }
            ("read_only" | "destructive" | "idempotent" | "open_world", _) => {
                let value = match &meta {
                    Meta::Path(_) => true,
                    Meta::NameValue(nv) => boolean(&nv.value)?,
                    Meta::List(list) => {
                        return Err(syn::Error::new(
                            list.span(),
                            format!("write `{key}` or `{key} = true`/`false`"),
                        ));
                    }
                };
                match key.as_str() {
                    "read_only" => out.read_only = value,
                    "destructive" => out.destructive = Some(value),
                    "idempotent" => out.idempotent = value,
                    _ => out.open_world = Some(value),
                }
            }
            _ => {
                return Err(syn::Error::new(
                    meta.span(),
                    "unknown #[tool] setting: expected name = \"..\", title = \"..\", \
                     description = \"..\", read_only, destructive, idempotent or open_world",
                ));
            }
        }
    }
    Ok(out)
}

fn string(expr: &Expr) -> syn::Result<String> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.value()),
        other => Err(syn::Error::new(other.span(), "expected a string literal")),
    }
}

fn boolean(expr: &Expr) -> syn::Result<bool> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        other => Err(syn::Error::new(other.span(), "expected `true` or `false`")),
    }
}

/// The doc comment's lines, trimmed and joined
fn doc_comment(function: &ItemFn) -> Option<String> {
    let lines: Vec<String> = function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => string(&nv.value).ok(),
            _ => None,
        })
        .map(|l| l.trim().to_owned())
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// A type without the invisible group a `macro_rules!` `ty` fragment puts around it, or
/// parentheses
fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => peel(&g.elem),
        Type::Paren(p) => peel(&p.elem),
        other => other,
    }
}

/// The last segment's name of a path type (`Context` of `mcp_sansio_tokio::Context`)
fn last_segment(ty: &Type) -> Option<String> {
    match peel(ty) {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// How the function's value becomes a `CallToolResult`
enum Returns {
    /// Content as it is (`String`, `&str`, `()`, `CallToolResult`)
    Unstructured,
    /// A value for `structuredContent` of this type
    Structured(Box<Type>),
}

/// The return type: `Ok`'s type and how errors go (`None`: no `Result`; `Some(true)`:
/// JSON-RPC errors, `Some(false)`: `isError` results)
fn returns(output: &ReturnType) -> (Returns, Option<bool>) {
    let ty = match output {
        ReturnType::Default => return (Returns::Unstructured, None),
        ReturnType::Type(_, ty) => peel(ty).clone(),
    };
    if let Type::Path(p) = &ty
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
            return (kind(ok), Some(protocol));
        }
    }
    (kind(ty), None)
}

fn kind(ty: Type) -> Returns {
    match peel(&ty) {
        Type::Tuple(t) if t.elems.is_empty() => Returns::Unstructured,
        Type::Reference(r) if last_segment(&r.elem).as_deref() == Some("str") => {
            Returns::Unstructured
        }
        _ => match last_segment(&ty).as_deref() {
            Some("String" | "CallToolResult") => Returns::Unstructured,
            _ => Returns::Structured(Box::new(ty)),
        },
    }
}

/// The parameters: where the context goes, and the arguments
struct Parameters {
    /// Each parameter in order: the context, or an argument's field name
    order: Vec<Param>,
    /// The named arguments (name, type), or the one `args` parameter's type
    arguments: Arguments,
}

enum Param {
    Context,
    Field(syn::Ident),
    Whole,
}

enum Arguments {
    Named(Vec<(syn::Ident, Type)>),
    Whole(Type),
}

fn parameters(function: &ItemFn) -> syn::Result<Parameters> {
    let mut order = Vec::new();
    let mut named = Vec::new();
    let mut whole = None;
    let mut context = false;
    let inputs = &function.sig.inputs;
    for input in inputs {
        let FnArg::Typed(param) = input else {
            return Err(syn::Error::new(
                input.span(),
                "#[tool] goes on a free function; a method's `self` is not supported",
            ));
        };
        let Pat::Ident(pat) = &*param.pat else {
            return Err(syn::Error::new(
                param.pat.span(),
                "a #[tool] parameter is a plain name (`city: String`), the argument of that name",
            ));
        };
        if last_segment(&param.ty).as_deref() == Some("Context") {
            if context {
                return Err(syn::Error::new(
                    param.span(),
                    "a #[tool] function takes at most one `Context`",
                ));
            }
            context = true;
            order.push(Param::Context);
            continue;
        }
        let name = pat.ident.clone();
        if name == "args" {
            whole = Some((*param.ty).clone());
            order.push(Param::Whole);
        } else {
            named.push((name.clone(), (*param.ty).clone()));
            order.push(Param::Field(name));
        }
    }
    let arguments = match whole {
        Some(ty) if named.is_empty() => Arguments::Whole(ty),
        Some(_) => {
            return Err(syn::Error::new(
                inputs.span(),
                "a parameter named `args` takes the whole arguments object: it is the only \
                 argument parameter (besides the `Context`)",
            ));
        }
        None => Arguments::Named(named),
    };
    Ok(Parameters { order, arguments })
}

fn generate(binding: &Binding, attrs: &Attributes, function: ItemFn) -> syn::Result<Tokens> {
    let krate = binding.krate();
    let support = quote!(#krate::__macros);
    let is_async = function.sig.asyncness.is_some();
    if matches!(binding, Binding::Blocking(_)) && is_async {
        return Err(syn::Error::new(
            function.sig.asyncness.span(),
            "mcp-sansio-blocking runs tools as plain functions on its worker threads: \
             remove `async`",
        ));
    }
    if !function.sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            function.sig.generics.span(),
            "a #[tool] function has no generic parameters",
        ));
    }
    let params = parameters(&function)?;
    let (returns, errors) = returns(&function.sig.output);
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let args_type = format_ident!("__{}_arguments", ident);

    // The arguments' type: the `args` parameter's, or a struct of the named ones
    let (args_item, args_ty) = match &params.arguments {
        Arguments::Whole(ty) => (quote!(), quote!(#ty)),
        Arguments::Named(fields) => {
            let names = fields.iter().map(|(n, _)| n);
            let types = fields.iter().map(|(_, t)| t);
            let serde_path = format!("{support}::serde").replace(' ', "");
            let schemars_path = format!("{support}::schemars").replace(' ', "");
            let item = quote! {
                #[allow(non_camel_case_types)]
                #[doc(hidden)]
                #[derive(#support::serde::Deserialize, #support::schemars::JsonSchema)]
                #[serde(crate = #serde_path)]
                #[schemars(crate = #schemars_path)]
                #vis struct #args_type { #(#names: #types),* }
            };
            (item, quote!(#args_type))
        }
    };
    let call_args = params.order.iter().map(|p| match p {
        Param::Context => quote!(cx),
        Param::Field(name) => quote!(arguments.#name),
        Param::Whole => quote!(arguments),
    });
    let uses_context = params.order.iter().any(|p| matches!(p, Param::Context));
    let cx_pattern = if uses_context {
        quote!(cx)
    } else {
        quote!(_cx)
    };
    let awaited = if is_async { quote!(.await) } else { quote!() };
    let call = quote!(#ident(#(#call_args),*)#awaited);

    let (output_setup, ok_into) = match &returns {
        Returns::Unstructured => (
            quote!(),
            quote!(::core::result::Result::Ok(#support::Unstructured::into_result(value))),
        ),
        Returns::Structured(ty) => (
            quote!(let output = #support::with_output::<#ty>(&mut tool);),
            quote!(#support::structured(&value, output)),
        ),
    };
    let convert = match errors {
        None => quote! { let value = #call; #ok_into },
        Some(false) => quote! {
            match #call {
                ::core::result::Result::Ok(value) => #ok_into,
                ::core::result::Result::Err(error) => ::core::result::Result::Ok(#support::failed(&error)),
            }
        },
        Some(true) => quote! {
            match #call {
                ::core::result::Result::Ok(value) => #ok_into,
                ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
            }
        },
    };
    let handler = match binding {
        Binding::Async(_) => quote! {
            move |#cx_pattern, arguments| async move {
                let arguments: #args_ty = #support::arguments(arguments)?;
                #convert
            }
        },
        Binding::Blocking(_) => quote! {
            move |#cx_pattern, arguments| {
                let arguments: #args_ty = #support::arguments(arguments)?;
                #convert
            }
        },
    };
    let name = &attrs.name;
    let title = option(attrs.title.as_deref());
    let description = option(attrs.description.as_deref());
    let read_only = attrs.read_only;
    let idempotent = attrs.idempotent;
    let destructive = option_bool(attrs.destructive);
    let open_world = option_bool(attrs.open_world);
    let doc =
        format!("Registers the `{name}` tool (made by `#[tool]` from the function `{ident}`)");
    Ok(quote! {
        #function

        #args_item

        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ident {}

        impl #support::Register<#krate::ServerBuilder> for #ident {
            fn register(
                self,
                builder: #krate::ServerBuilder,
            ) -> ::core::result::Result<#krate::ServerBuilder, #support::CatalogError> {
                let attributes = #support::Attributes {
                    name: #name,
                    title: #title,
                    description: #description,
                    read_only: #read_only,
                    destructive: #destructive,
                    idempotent: #idempotent,
                    open_world: #open_world,
                };
                #[allow(unused_mut)]
                let mut tool = #support::tool::<#args_ty>(&attributes)?;
                #output_setup
                builder.tool(tool, #handler)
            }
        }
    })
}

fn option(value: Option<&str>) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn option_bool(value: Option<bool>) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}
