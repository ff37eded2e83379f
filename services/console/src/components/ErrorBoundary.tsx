import { Component, type ErrorInfo, type ReactNode } from 'react';

/** A page that throws while rendering shows what happened instead of a blank screen. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    console.error('console page failed', error, info.componentStack);
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <main>
        <h1>Something went wrong on this page</h1>
        <div className="error" role="alert">
          {this.state.error.message}
        </div>
        <p>
          <button type="button" onClick={() => this.setState({ error: null })}>
            Try again
          </button>
        </p>
      </main>
    );
  }
}
