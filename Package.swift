// swift-tools-version:6.2
import PackageDescription

// Every target of our own builds without warnings. Release builds optimise across modules:
// generic code of one module (SecureChannel<Address>, PeerTable<Address>) used with another's
// types is then specialised, where unspecialised it boxes its values on the heap per packet.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "intercom",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "intercom", targets: ["intercom"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // C libraries, one system-library target each, found through pkg-config.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        // The residual echo suppressor's spectra: SpeexDSP and Opus keep their FFTs to themselves.
        .systemLibrary(name: "CKissFFT", pkgConfig: "kissfft-float", providers: [.apt(["libkissfft-dev"])]),
        .systemLibrary(name: "CAvahi", pkgConfig: "avahi-client", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // Linux calls the Glibc module leaves out (eventfd); part of libc, nothing to link.
        .systemLibrary(name: "CLinux"),

        // Numeric inner loops of the core, optimised in every build (a debug build's Swift
        // loop of the echo move tracker cost a third of a core): pure functions, no state.
        .target(name: "CSignalKernels", cSettings: [.unsafeFlags(["-O2"])]),

        // Pure Swift (libm and the signal kernels aside), no I/O, no clocks read: packets,
        // jitter buffer, mixing, talk logic.
        .target(
            name: "IntercomCore",
            dependencies: ["CSignalKernels", .product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: strict
        ),
        // Safe owners of the Opus, SpeexDSP and FFT state.
        .target(
            name: "IntercomDSP",
            dependencies: ["CKissFFT", "COpus", "CSpeexDSP", "IntercomCore"],
            swiftSettings: strict
        ),
        // Cryptography over libsodium: the Noise handshake, CPace pairing, packet protection,
        // replay windows. State machines only: no I/O, no clocks read (time is passed in).
        .target(
            name: "IntercomSecurity",
            dependencies: ["CSodium", "IntercomCore"],
            swiftSettings: strict
        ),
        // Sockets, files, sound devices, discovery, terminal: everything that touches the OS.
        .target(
            name: "IntercomIO",
            dependencies: [
                "CALSA", "CAvahi", "CGPIOD", "CLinux", "IntercomCore", "IntercomDSP", "IntercomSecurity",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // A peer in a call: wires endpoints, DSP, codec, transport and jitter buffers together.
        .target(
            name: "IntercomCall",
            dependencies: [
                "IntercomCore", "IntercomDSP", "IntercomIO", "IntercomSecurity",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "intercom",
            dependencies: [
                "IntercomCall", "IntercomIO", "IntercomCore", "IntercomDSP", "IntercomSecurity",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        .testTarget(name: "IntercomCoreTests", dependencies: ["IntercomCore"], swiftSettings: strict),
        .testTarget(
            name: "IntercomDSPTests",
            dependencies: ["IntercomDSP", "IntercomCore", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntercomSecurityTests",
            dependencies: ["IntercomSecurity", "IntercomCore", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntercomIOTests",
            dependencies: ["IntercomIO", "IntercomCore", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntercomCallTests",
            dependencies: ["IntercomCall", "IntercomIO", "IntercomCore", "IntercomDSP", "IntercomSecurity", "TestSupport"],
            swiftSettings: strict
        ),
        // A helper process for the state files' crash test: rewrites a trusted list until killed.
        .executableTarget(name: "StateWriter", dependencies: ["IntercomIO"], path: "Tests/StateWriter", swiftSettings: strict),
        // Fixtures shared by the test targets: synthetic speech, signal measures, child processes.
        .target(name: "TestSupport", dependencies: ["IntercomCore"], path: "Tests/TestSupport", swiftSettings: strict),
    ]
)
