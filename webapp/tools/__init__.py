"""The tools the model calls: each is real code over real data with an offline default."""
