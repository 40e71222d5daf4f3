"""What the tests share: helpers, tools and servers to test against."""
