/// How close a beacon is: immediate (< 0.5 m), near (< 3 m), far, or unknown (no usable signal).
public enum Proximity: String, Sendable, Codable, CaseIterable {
    case immediate, near, far, unknown
}

/// Distance from RSSI and the beacon's calibrated power at 1 m, by AltBeacon's curve-fitted model
/// (android-beacon-library, `distance/CurveFittedDistanceCalculator.calculateDistance`):
/// with `ratio = rssi / txPower`, `ratio^10` below 1, else `a · ratio^b + c`. The coefficients depend
/// on the receiver's radio; the defaults are AltBeacon's.
public struct DistanceModel: Sendable, Equatable {
    public var a: Double
    public var b: Double
    public var c: Double

    public init(a: Double = 0.42093, b: Double = 6.9476, c: Double = 0.54992) {
        self.a = a
        self.b = b
        self.c = c
    }

    /// Metres, or nil when it cannot be estimated (an RSSI of 0, or no calibrated power).
    public func distance(rssi: Double, txPower: Int) -> Double? {
        guard rssi != 0, txPower != 0 else { return nil }
        let ratio = rssi / Double(txPower)
        return ratio < 1 ? pow(ratio, 10) : a * pow(ratio, b) + c
    }
}

/// Classifies distances into proximity with hysteresis: a beacon leaves its current class only
/// when it is past the boundary by `margin` (a fraction of the boundary), so a reading that hovers
/// at 3 m does not flap between near and far.
public struct ProximityClassifier: Sendable, Equatable {
    public var immediateBelow: Double
    public var nearBelow: Double
    public var margin: Double

    public init(immediateBelow: Double = 0.5, nearBelow: Double = 3.0, margin: Double = 0.15) {
        self.immediateBelow = immediateBelow
        self.nearBelow = nearBelow
        self.margin = margin
    }

    /// The class without hysteresis.
    public func plain(_ distance: Double?) -> Proximity {
        guard let d = distance else { return .unknown }
        return d < immediateBelow ? .immediate : d < nearBelow ? .near : .far
    }

    /// The class for `distance`, given the `current` one.
    public func classify(_ distance: Double?, current: Proximity) -> Proximity {
        guard let d = distance else { return .unknown }
        let candidate = plain(d)
        guard candidate != current, current != .unknown else { return candidate }
        let up = 1 + margin, down = 1 - margin
        switch (current, candidate) {
        case (.immediate, _): return d > immediateBelow * up ? candidate : .immediate
        case (.near, .immediate): return d < immediateBelow * down ? .immediate : .near
        case (.near, .far): return d > nearBelow * up ? .far : .near
        case (.far, _): return d < nearBelow * down ? plain(d) : .far
        default: return candidate
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
