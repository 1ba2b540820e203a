//! The root module a plugin library exports, and the macro that exports it.

use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RSlice, RStr};
use abi_stable::StableAbi;

use crate::block::BlockDescriptor;

/// The version of this crate, compiled into every plugin; shown when versions disagree.
pub const API_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Prefix of the exported symbol that holds a plugin's library header; the rest is the plugin
/// crate's name. The registry looks for it in a file's export table before loading the file, so a
/// library that is not a plugin is never loaded (none of its initialisers run).
pub const HEADER_SYMBOL_PREFIX: &str = "nnue_plugin_header_";

/// What a plugin library exports: who it is and its blocks. abi_stable checks the layout of
/// this type (and everything reachable from it) when the library is loaded, so a plugin built
/// against a changed `plugin-api` is refused instead of misread.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModule_Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginModule {
    /// The plugin crate's name (`CARGO_PKG_NAME`).
    pub crate_name: RStr<'static>,
    /// The plugin crate's version.
    pub crate_version: RStr<'static>,
    /// The `plugin-api` version the plugin was built against.
    pub api_version: RStr<'static>,
    /// The blocks the plugin provides.
    #[sabi(last_prefix_field)]
    pub blocks: extern "C" fn() -> RSlice<'static, BlockDescriptor>,
}

impl RootModule for PluginModule_Ref {
    abi_stable::declare_root_module_statics! {PluginModule_Ref}
    const BASE_NAME: &'static str = "nnue_plugin";
    const NAME: &'static str = "nnue_plugin";
    const VERSION_STRINGS: VersionStrings = abi_stable::package_version_strings!();
}

/// Exports the listed [`FeatureBlock`](crate::FeatureBlock) types as this crate's plugin.
///
/// Put it once in the plugin crate's `lib.rs` (crate-type `["cdylib", "rlib"]`):
///
/// ```ignore
/// plugin_api::export_plugin!(MyBlock, MyOtherBlock);
/// ```
///
/// It defines the symbol the registry looks for (abi_stable's library header, named
/// [`HEADER_SYMBOL_PREFIX`]`<crate>`) and a root module that lists the blocks; the plugin crate
/// needs no dependency besides `plugin-api`.
#[macro_export]
macro_rules! export_plugin {
    ($($block:ty),+ $(,)?) => {
        #[doc(hidden)]
        pub mod __nnue_plugin_export {
            #[allow(unused_imports)]
            use super::*;
            use $crate::abi_stable::library::{CheckTypeLayout, LibHeader, RootModuleResult};
            use $crate::abi_stable::std_types::{RSlice, RStr};

            /// The blocks this plugin exports, as descriptors.
            pub static BLOCKS: &[$crate::BlockDescriptor] = &[$($crate::BlockDescriptor::of::<$block>()),+];

            extern "C" fn blocks() -> RSlice<'static, $crate::BlockDescriptor> {
                RSlice::from_slice(BLOCKS)
            }

            fn root_module() -> $crate::PluginModule_Ref {
                use $crate::abi_stable::prefix_type::PrefixTypeTrait;
                $crate::install_plugin_panic_hook();
                $crate::PluginModule {
                    crate_name: RStr::from_str(env!("CARGO_PKG_NAME")),
                    crate_version: RStr::from_str(env!("CARGO_PKG_VERSION")),
                    api_version: RStr::from_str($crate::API_VERSION),
                    blocks,
                }
                .leak_into_prefix()
            }

            extern "C" fn erased_root_module() -> RootModuleResult {
                $crate::abi_stable::library::__call_root_module_loader(root_module)
            }

            /// abi_stable's library header, exported under a name unique to this crate
            /// (`nnue_plugin_header_<crate>`) so that several plugin crates can also be linked
            /// into one program as rlibs; the registry finds it by its prefix.
            #[export_name = concat!("nnue_plugin_header_", env!("CARGO_CRATE_NAME"))]
            pub static NNUE_PLUGIN_HEADER: LibHeader = unsafe {
                LibHeader::from_constructor::<$crate::PluginModule_Ref>(
                    erased_root_module,
                    CheckTypeLayout::Yes,
                )
            };
        }
    };
}
