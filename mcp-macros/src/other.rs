//! `#[prompt]` and `#[resource]` on functions

use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType};

use crate::common::{
    Binding, Param, Setting, closure, doc_comment, option, option_of, params, require_scopes,
    scopes, settings, split_result,
};

/// The function, the registering type beside it, and its `Register` impl around `register`
fn wrap(binding: &Binding, function: &ItemFn, what: &str, name: &str, register: &Tokens) -> Tokens {
    let krate = binding.krate();
    let support = binding.support();
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let doc = format!("Registers the `{name}` {what} (made from the function `{ident}`)");
    quote! {
        #function

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
            }
        }
    }
}

/// `value` (the function's outcome) as the handler's result through `into` (`Err` of a
/// `Result` as an `ErrorObject`: as it is, or -32603 with its text)
fn outcome(binding: &Binding, output: &ReturnType, call: &Tokens, into: &Tokens) -> Tokens {
    let support = binding.support();
    let errors = match output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => split_result(ty).1,
    };
    match errors {
        None => quote! { let value = #call; ::core::result::Result::Ok(#into) },
        Some(true) => quote! {
            match #call {
                ::core::result::Result::Ok(value) => ::core::result::Result::Ok(#into),
                ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
            }
        },
        Some(false) => quote! {
            match #call {
                ::core::result::Result::Ok(value) => ::core::result::Result::Ok(#into),
                ::core::result::Result::Err(error) => {
                    ::core::result::Result::Err(#support::internal(&error))
                }
            }
        },
    }
}

fn parse_fn(item: Tokens, what: &str) -> syn::Result<ItemFn> {
    syn::parse2(item)
        .map_err(|e| syn::Error::new(e.span(), format!("#[{what}] goes on a function")))
}

/// `#[prompt]`: the parameters are the prompt's arguments (`String`, `Option<String>`)
pub(crate) fn prompt(binding: &Binding, attr: Tokens, item: Tokens) -> syn::Result<Tokens> {
    let function = parse_fn(item, "prompt")?;
    binding.check(&function.sig)?;
    let mut name = function.sig.ident.to_string();
    let mut title = None;
    let mut description = doc_comment(&function.attrs);
    let mut needed = Vec::new();
    for setting in settings(attr)? {
        if let Some(scopes) = scopes(&setting) {
            needed = scopes?;
            continue;
        }
        match setting {
            Setting::Text(key, value, _) if key == "name" => name = value,
            Setting::Text(key, value, _) if key == "title" => title = Some(value),
            Setting::Text(key, value, _) if key == "description" => description = Some(value),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "unknown #[prompt] setting: expected name, title or description = \"..\", \
                     or scopes = [\"..\"]",
                ));
            }
        }
    }
    let support = binding.support();
    let params = params(&function.sig, false)?;
    let mut declared = Vec::new();
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    let mut uses_context = false;
    for param in &params {
        match param {
            Param::Context => {
                uses_context = true;
                call_args.push(quote!(cx));
            }
            Param::Named(ident, ty) => {
                let arg = ident.to_string();
                let required = option_of(ty).is_none();
                declared.push(quote!((#arg, #required)));
                if required {
                    reads.push(quote!(let #ident = #support::prompt_argument(&arguments, #arg)?;));
                } else {
                    reads.push(quote!(let #ident = arguments.get(#arg).cloned();));
                }
                call_args.push(quote!(#ident));
            }
        }
    }
    let ident = &function.sig.ident;
    let awaited = if function.sig.asyncness.is_some() {
        quote!(.await)
    } else {
        quote!()
    };
    let call = quote!(#ident(#(#call_args),*)#awaited);
    let into = quote!(#support::IntoPrompt::into_prompt(value));
    let body = outcome(binding, &function.sig.output, &call, &into);
    let cx = if uses_context {
        quote!(cx)
    } else {
        quote!(_cx)
    };
    let handler = closure(
        binding,
        quote!(#cx, arguments: ::std::collections::BTreeMap<::std::string::String, ::std::string::String>),
        quote!(),
        quote!(#(#reads)* #body),
    );
    let title = option(title.as_deref());
    let description = option(description.as_deref());
    let require = require_scopes(binding, "Prompt", &name, &needed);
    let register = quote! {
        let attributes = #support::PromptAttributes {
            name: #name,
            title: #title,
            description: #description,
            arguments: &[#(#declared),*],
        };
        let builder = builder.prompt(#support::prompt(&attributes), #handler)? #require;
        ::core::result::Result::Ok(builder)
    };
    Ok(wrap(binding, &function, "prompt", &name, &register))
}

/// `#[resource("uri", ..)]`: a fixed resource, or a template whose variables are parameters
pub(crate) fn resource(binding: &Binding, attr: Tokens, item: Tokens) -> syn::Result<Tokens> {
    let function = parse_fn(item, "resource")?;
    binding.check(&function.sig)?;
    let mut uri = None;
    let mut name = function.sig.ident.to_string();
    let mut title = None;
    let mut description = doc_comment(&function.attrs);
    let mut mime_type = None;
    let mut needed = Vec::new();
    let attr_span = attr.span();
    for setting in settings(attr)? {
        if let Some(scopes) = scopes(&setting) {
            needed = scopes?;
            continue;
        }
        match setting {
            Setting::Bare(value, _) => uri = Some(value),
            Setting::Text(key, value, _) if key == "uri" => uri = Some(value),
            Setting::Text(key, value, _) if key == "name" => name = value,
            Setting::Text(key, value, _) if key == "title" => title = Some(value),
            Setting::Text(key, value, _) if key == "description" => description = Some(value),
            Setting::Text(key, value, _) if key == "mime_type" => mime_type = Some(value),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "unknown #[resource] setting: expected the URI (\"scheme://..\"), then \
                     name, title, description or mime_type = \"..\", or scopes = [\"..\"]",
                ));
            }
        }
    }
    let Some(uri) = uri else {
        return Err(syn::Error::new(
            attr_span,
            "#[resource] needs the URI first: #[resource(\"scheme://path/{id}\")]",
        ));
    };
    let template = uri.contains('{');
    let support = binding.support();
    let params = params(&function.sig, false)?;
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    let mut uses_context = false;
    for param in &params {
        match param {
            Param::Context => {
                uses_context = true;
                call_args.push(quote!(cx));
            }
            Param::Named(ident, _) if ident == "uri" => {
                call_args.push(quote!(::core::clone::Clone::clone(&uri)));
            }
            Param::Named(ident, ty) => {
                let var = ident.to_string();
                if !template || !uri.contains(&format!("{{{var}")) {
                    return Err(syn::Error::new(
                        ident.span(),
                        format!(
                            "`{var}` is no variable of the URI template {uri:?} (a parameter is \
                             a `{{{var}}}` of it, `uri` the URI read, or the `Context`)"
                        ),
                    ));
                }
                reads.push(quote!(let #ident: #ty = #support::variable(&variables, #var)?;));
                call_args.push(quote!(#ident));
            }
        }
    }
    let ident = &function.sig.ident;
    let awaited = if function.sig.asyncness.is_some() {
        quote!(.await)
    } else {
        quote!()
    };
    let call = quote!(#ident(#(#call_args),*)#awaited);
    let mime = option(mime_type.as_deref());
    let into = quote!(#support::IntoContents::into_contents(value, uri, #mime));
    let body = outcome(binding, &function.sig.output, &call, &into);
    let cx = if uses_context {
        quote!(cx)
    } else {
        quote!(_cx)
    };
    let variables = if reads.is_empty() {
        quote!(_variables)
    } else {
        quote!(variables)
    };
    let handler = closure(
        binding,
        quote!(#cx, uri: ::std::string::String, #variables),
        quote!(),
        quote!(#(#reads)* #body),
    );
    let title = option(title.as_deref());
    let description = option(description.as_deref());
    let (add, kind) = if template {
        (quote!(resource_template), "Template")
    } else {
        (quote!(resource), "Resource")
    };
    let require = require_scopes(binding, kind, &uri, &needed);
    let register = quote! {
        let attributes = #support::ResourceAttributes {
            uri: #uri,
            name: #name,
            title: #title,
            description: #description,
            mime_type: #mime,
        };
        let builder = builder.#add(#support::#add(&attributes), #handler)? #require;
        ::core::result::Result::Ok(builder)
    };
    Ok(wrap(binding, &function, "resource", &name, &register))
}
