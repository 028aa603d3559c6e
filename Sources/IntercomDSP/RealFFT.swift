import CKissFFT

/// Owns kissfft's plans for a real FFT of one even length, forward and inverse; freed with it.
/// Neither direction allocates.
public final class RealFFT {
    public let length: Int
    /// The bins of a spectrum: length / 2 + 1, from 0 Hz to half the sample rate.
    public var binCount: Int { length / 2 + 1 }
    private let forwardPlan: kiss_fftr_cfg
    private let inversePlan: kiss_fftr_cfg

    public init(length: Int) throws(FFTError) {
        guard length >= 4, length % 2 == 0 else { throw .invalidLength(length) }
        guard let forwardPlan = kiss_fftr_alloc(Int32(length), 0, nil, nil) else { throw .creationFailed(length) }
        guard let inversePlan = kiss_fftr_alloc(Int32(length), 1, nil, nil) else {
            free(UnsafeMutableRawPointer(forwardPlan))
            throw .creationFailed(length)
        }
        self.length = length
        self.forwardPlan = forwardPlan
        self.inversePlan = inversePlan
    }

    deinit {
        // kiss_fftr_free is free(3) (a macro Swift does not import).
        free(UnsafeMutableRawPointer(forwardPlan))
        free(UnsafeMutableRawPointer(inversePlan))
    }

    /// The spectrum of `length` samples, into `binCount` bins.
    public func forward(_ samples: UnsafePointer<Float>, into spectrum: UnsafeMutablePointer<kiss_fft_cpx>) {
        kiss_fftr(forwardPlan, samples, spectrum)
    }

    /// `length` samples from `binCount` bins, scaled by `length` (kissfft does not divide).
    public func inverse(_ spectrum: UnsafePointer<kiss_fft_cpx>, into samples: UnsafeMutablePointer<Float>) {
        kiss_fftri(inversePlan, spectrum, samples)
    }
}

/// A real FFT that could not be made.
public enum FFTError: Error, Equatable, CustomStringConvertible {
    case invalidLength(Int)
    case creationFailed(Int)

    public var description: String {
        switch self {
        case .invalidLength(let length): "FFT: a real FFT needs an even length of at least 4, not \(length)"
        case .creationFailed(let length): "FFT: kissfft could not make a plan of \(length) points"
        }
    }
}
