//! Test fixture: exports a root module with the plugin-api's name and version but an older
//! layout (block descriptors without the layout identity), as a plugin compiled against a
//! previous plugin-api would. The registry must refuse it with one line.

#![allow(non_camel_case_types, non_upper_case_globals)]

use abi_stable::library::{CheckTypeLayout, LibHeader, RootModule, RootModuleResult};
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RSlice, RStr};
use abi_stable::{prefix_type::PrefixTypeTrait, StableAbi};

/// The old block descriptor: name and size only.
#[repr(C)]
#[derive(StableAbi, Clone, Copy)]
pub struct BlockDescriptor {
    /// Block name.
    pub name: RStr<'static>,
    /// Number of indices.
    pub size: u32,
}

/// The old root module.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModule_Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginModule {
    /// Crate name.
    pub crate_name: RStr<'static>,
    /// The blocks.
    #[sabi(last_prefix_field)]
    pub blocks: extern "C" fn() -> RSlice<'static, BlockDescriptor>,
}

impl RootModule for PluginModule_Ref {
    abi_stable::declare_root_module_statics! {PluginModule_Ref}
    const BASE_NAME: &'static str = "nnue_plugin";
    const NAME: &'static str = "nnue_plugin";
    const VERSION_STRINGS: VersionStrings = abi_stable::package_version_strings!();
}

static BLOCKS: &[BlockDescriptor] = &[BlockDescriptor {
    name: RStr::from_str("stale"),
    size: 1,
}];

extern "C" fn blocks() -> RSlice<'static, BlockDescriptor> {
    RSlice::from_slice(BLOCKS)
}

/// The root module of the fixture.
pub fn get_library() -> PluginModule_Ref {
    PluginModule {
        crate_name: RStr::from_str("fixture-stale-plugin"),
        blocks,
    }
    .leak_into_prefix()
}

extern "C" fn erased_root_module() -> RootModuleResult {
    abi_stable::library::__call_root_module_loader(get_library)
}

/// The library header under the name the plugin loader looks for.
#[no_mangle]
pub static nnue_plugin_header_fixture_stale_plugin: LibHeader = unsafe {
    LibHeader::from_constructor::<PluginModule_Ref>(erased_root_module, CheckTypeLayout::Yes)
};
