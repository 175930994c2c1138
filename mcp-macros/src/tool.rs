//! `#[tool]` on a function, and `#[tool_router]` on an impl block of `#[tool]` methods

use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemFn, ItemImpl, ReturnType, Signature, Type};

use crate::common::{
    Binding, Param, Setting, closure, doc_comment, last_segment, option, option_bool, params, peel,
    require_scopes, scopes, settings, split_result,
};

/// What the attribute and the doc comment say of a tool
struct Attributes {
    name: String,
    title: Option<String>,
    description: Option<String>,
    read_only: bool,
    destructive: Option<bool>,
    idempotent: bool,
    open_world: Option<bool>,
    /// The scopes a caller needs (none: anyone may call it)
    scopes: Vec<String>,
}

fn attributes(attr: Tokens, sig: &Signature, attrs: &[syn::Attribute]) -> syn::Result<Attributes> {
    let mut out = Attributes {
        name: sig.ident.to_string(),
        title: None,
        description: doc_comment(attrs),
        read_only: false,
        destructive: None,
        idempotent: false,
        open_world: None,
        scopes: Vec::new(),
    };
    for setting in settings(attr)? {
        if let Some(scopes) = scopes(&setting) {
            out.scopes = scopes?;
            continue;
        }
        match setting {
            Setting::Text(key, value, _) if key == "name" => out.name = value,
            Setting::Text(key, value, _) if key == "title" => out.title = Some(value),
            Setting::Text(key, value, _) if key == "description" => {
                out.description = Some(value);
            }
            Setting::Flag(key, value, _) if key == "read_only" => out.read_only = value,
            Setting::Flag(key, value, _) if key == "destructive" => out.destructive = Some(value),
            Setting::Flag(key, value, _) if key == "idempotent" => out.idempotent = value,
            Setting::Flag(key, value, _) if key == "open_world" => out.open_world = Some(value),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "unknown #[tool] setting: expected name = \"..\", title = \"..\", \
                     description = \"..\", read_only, destructive, idempotent, open_world or \
                     scopes = [\"..\"]",
                ));
            }
        }
    }
    Ok(out)
}

/// How the function's value becomes a `CallToolResult`
enum Returns {
    /// Content as it is (`String`, `&str`, `()`, `CallToolResult`)
    Unstructured,
    /// A value for `structuredContent` of this type
    Structured(Box<Type>),
}

fn kind(ty: &Type) -> Returns {
    match peel(ty) {
        Type::Tuple(t) if t.elems.is_empty() => Returns::Unstructured,
        Type::Reference(r) if last_segment(&r.elem).as_deref() == Some("str") => {
            Returns::Unstructured
        }
        _ => match last_segment(ty).as_deref() {
            Some("String" | "CallToolResult") => Returns::Unstructured,
            _ => Returns::Structured(Box::new(ty.clone())),
        },
    }
}

/// One tool's generated code: items beside it (the arguments' struct), and the statement
/// that adds it to `builder`
struct Generated {
    items: Tokens,
    register: Tokens,
}

/// How a tool's function is called
struct Callee {
    /// What is called with the arguments (`name`, or `this.name`)
    path: Tokens,
    /// What the handler does first (a method's handler clones the shared value)
    prelude: Tokens,
    /// The name of the arguments' struct
    args_type: syn::Ident,
    /// Whether it is a method (of a `#[tool_router]` block)
    method: bool,
}

/// The code of a tool whose function is `sig`, called as `callee`
fn generate(
    binding: &Binding,
    attrs: &Attributes,
    sig: &Signature,
    vis: &syn::Visibility,
    callee: &Callee,
) -> syn::Result<Generated> {
    let Callee {
        path: callee,
        prelude,
        args_type,
        method,
    } = callee;
    let method = *method;
    binding.check(sig)?;
    let support = binding.support();
    let params = params(sig, method)?;
    // The arguments' type: the one `args` parameter's, or a struct of the named ones
    let named: Vec<_> = params
        .iter()
        .filter_map(|p| match p {
            Param::Named(name, ty) => Some((name, ty)),
            Param::Context => None,
        })
        .collect();
    let whole = named.iter().find(|(name, _)| *name == "args");
    if whole.is_some() && named.len() > 1 {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "a parameter named `args` takes the whole arguments object: it is the only \
             argument parameter (besides the `Context`)",
        ));
    }
    let (items, args_ty) = match whole {
        Some((_, ty)) => (quote!(), quote!(#ty)),
        None => {
            let names = named.iter().map(|(n, _)| n);
            let types = named.iter().map(|(_, t)| t);
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
    let call_args = params.iter().map(|p| match p {
        Param::Context => quote!(cx),
        Param::Named(name, _) if whole.is_some() && name == "args" => quote!(arguments),
        Param::Named(name, _) => quote!(arguments.#name),
    });
    let uses_context = params.iter().any(|p| matches!(p, Param::Context));
    let cx = if uses_context {
        quote!(cx)
    } else {
        quote!(_cx)
    };
    let awaited = if sig.asyncness.is_some() {
        quote!(.await)
    } else {
        quote!()
    };
    let call = quote!(#callee(#(#call_args),*)#awaited);

    let (ok_ty, errors) = match &sig.output {
        ReturnType::Default => (None, None),
        ReturnType::Type(_, ty) => {
            let (ok, errors) = split_result(ty);
            (Some(ok), errors)
        }
    };
    let returns = ok_ty.as_ref().map_or(Returns::Unstructured, kind);
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
                ::core::result::Result::Err(error) => {
                    ::core::result::Result::Ok(#support::failed(&error))
                }
            }
        },
        Some(true) => quote! {
            match #call {
                ::core::result::Result::Ok(value) => #ok_into,
                ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
            }
        },
    };
    let body = quote! {
        let arguments: #args_ty = #support::arguments(arguments)?;
        #convert
    };
    let handler = closure(binding, quote!(#cx, arguments), prelude.clone(), body);
    let name = &attrs.name;
    let title = option(attrs.title.as_deref());
    let description = option(attrs.description.as_deref());
    let read_only = attrs.read_only;
    let idempotent = attrs.idempotent;
    let destructive = option_bool(attrs.destructive);
    let open_world = option_bool(attrs.open_world);
    let outer = if method {
        quote!(let this = ::std::sync::Arc::clone(&this);)
    } else {
        quote!()
    };
    let require = require_scopes(binding, "Tool", name, &attrs.scopes);
    let register = quote! {
        let builder = {
            #outer
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
            builder.tool(tool, #handler)? #require
        };
    };
    Ok(Generated { items, register })
}

/// `#[tool]` on a function
pub(crate) fn tool(binding: &Binding, attr: Tokens, item: Tokens) -> syn::Result<Tokens> {
    let function: ItemFn = syn::parse2(item)
        .map_err(|e| syn::Error::new(e.span(), "#[tool] goes on a function (fn or async fn)"))?;
    let attrs = attributes(attr, &function.sig, &function.attrs)?;
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let args_type = format_ident!("__{}_arguments", ident);
    let callee = Callee {
        path: quote!(#ident),
        prelude: quote!(),
        args_type,
        method: false,
    };
    let Generated { items, register } = generate(binding, &attrs, &function.sig, vis, &callee)?;
    let krate = binding.krate();
    let support = binding.support();
    let doc = format!(
        "Registers the `{}` tool (made by `#[tool]` from the function `{ident}`)",
        attrs.name
    );
    Ok(quote! {
        #function

        #items

        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ident {}

        impl #support::Register<#krate::ServerBuilder> for #ident {
            fn register(
                self,
                builder: #krate::ServerBuilder,
            ) -> ::core::result::Result<#krate::ServerBuilder, #support::CatalogError> {
                #register
                ::core::result::Result::Ok(builder)
            }
        }
    })
}

/// `#[tool_router]` on an impl block: its `#[tool]` methods, registered with the value
pub(crate) fn router(binding: &Binding, attr: Tokens, item: Tokens) -> syn::Result<Tokens> {
    if !attr.is_empty() {
        return Err(syn::Error::new(
            attr.span(),
            "#[tool_router] takes no settings",
        ));
    }
    let mut block: ItemImpl = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[tool_router] goes on an `impl Type { .. }` block",
        )
    })?;
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return Err(syn::Error::new(
            block.span(),
            "#[tool_router] goes on a plain `impl Type { .. }` block (no trait, no generics)",
        ));
    }
    let self_ty = &block.self_ty;
    let type_name = last_segment(self_ty).unwrap_or_else(|| "tools".into());
    let mut items = Vec::new();
    let mut registers = Vec::new();
    for member in &mut block.items {
        let ImplItem::Fn(method) = member else {
            continue;
        };
        let Some(at) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
            continue;
        };
        let tool_attr = method.attrs.remove(at);
        let settings = match &tool_attr.meta {
            syn::Meta::Path(_) => quote!(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                return Err(syn::Error::new(nv.span(), "write #[tool] or #[tool(..)]"));
            }
        };
        let attrs = attributes(settings, &method.sig, &method.attrs)?;
        let ident = &method.sig.ident;
        let args_type = format_ident!("__{}_{}_arguments", type_name, ident);
        let callee = Callee {
            path: quote!(this.#ident),
            prelude: quote!(let this = ::std::sync::Arc::clone(&this);),
            args_type,
            method: true,
        };
        let generated = generate(
            binding,
            &attrs,
            &method.sig,
            &syn::Visibility::Inherited,
            &callee,
        )?;
        items.push(generated.items);
        registers.push(generated.register);
    }
    if registers.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "a #[tool_router] block has at least one #[tool] method",
        ));
    }
    let krate = binding.krate();
    let support = binding.support();
    Ok(quote! {
        #block

        #(#items)*

        impl #support::Register<#krate::ServerBuilder> for #self_ty {
            fn register(
                self,
                builder: #krate::ServerBuilder,
            ) -> ::core::result::Result<#krate::ServerBuilder, #support::CatalogError> {
                let this = ::std::sync::Arc::new(self);
                #(#registers)*
                let _ = this;
                ::core::result::Result::Ok(builder)
            }
        }
    })
}
