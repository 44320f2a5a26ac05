package server

// ThroughSDK makes s answer every tools/call through the SDK's session, so a test can compare that answer
// with the direct one.
func ThroughSDK(s *Server) { s.sdkOnly = true }

// Directs is how many tools/calls s answered directly.
func Directs(s *Server) int64 { return s.directs.Load() }
